#!/usr/bin/env python3
"""The CI recipes for a user's own repository, played (issue #47 item 3).

A sample repository is made in a clean Debian root (clean_root.sh: minbase +
python3, as a CI runner has): a small order service of its own
(sample-repo/service.py) and its target file, nothing of idemproof's checkout
but the package, restored where each recipe's cache would put it. Then:
  - action.yml (the composite GitHub Action at the repository root): its
    steps parsed with python3-yaml and played in order, `if:` and `${{ }}`
    evaluated (an expression this player does not know fails the test), the
    `run:` lines run with bash in the repository with the inputs of the
    workflow docs/ci.md shows; actions/cache is played as a hit on the
    restored package, so the package build step is skipped (it is
    scripts/package.sh, whose cpack part test-install/package-build runs);
  - ci/gitlab/idemproof.gitlab-ci.yml merged with the .gitlab-ci.yml
    docs/ci.md shows: before_script and script as one shell, after_script
    after.
Each must install the package, run the suite against the service and keep
junit.xml, the job summary and report.html (exit 0); the same run step
against the service's double-execute bug must exit 1 with the violation in
the summary.
Usage: ci_recipes_test.py SOURCE_DIR BUILD_DIR DEB_DIR
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import time

import yaml

SOURCE, BUILD, DEB_DIR = sys.argv[1:4]
HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(BUILD, "install-test")
REPO = "/work/repo"  # in the root
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)
    return cond


def doc_blocks():
    text = open(os.path.join(SOURCE, "docs/ci.md")).read()
    return {m.group(1): m.group(2) for m in
            re.finditer(r"<!-- ci-recipe: ([\w-]+) -->\n```yaml\n(.*?)\n```", text, re.S)}


def at(root, path):
    """`path` of the root as its chroot sees it (clean_root.sh: an overlay, unmounted between plays)."""
    upper = root + "/upper" + path
    return upper if os.path.lexists(upper) else root + "/lower" + path


def put(root, path):
    """Where to write `path` of the root (its overlay's upper layer)."""
    os.makedirs(root + "/upper" + path, exist_ok=True)
    # A folder of the upper layer stands for the lower's: it keeps the lower's
    # mode (/tmp's 1777), not the umask's 755.
    parts = path.strip("/").split("/")
    for i in range(1, len(parts) + 1):
        sub = "/" + "/".join(parts[:i])
        lower = root + "/lower" + sub
        if os.path.isdir(lower):
            os.chmod(root + "/upper" + sub, os.stat(lower).st_mode & 0o7777)
    return root + "/upper" + path


def make_root(name):
    """A fresh clean root holding the sample repository; returns its path."""
    root = os.path.join(CACHE, "recipe-root-" + name)
    subprocess.run(["bash", os.path.join(HERE, "clean_root.sh"), "make", CACHE, root, "python3"], check=True)
    check(not os.path.exists(at(root, SOURCE)), name + ": the checkout is not in the root")
    check(not os.path.exists(at(root, "/usr/bin/idemproof")), name + ": no idemproof in the clean root")
    repo = put(root, REPO)
    for f in ("service.py", "idemproof.yaml"):
        shutil.copy(os.path.join(HERE, "sample-repo", f), repo)
    return root


def play(root, script, env, cwd=REPO, timeout=1200):
    """Runs `script` with bash -eo pipefail in the root, with only `env`; returns (exit, output)."""
    path = os.path.join(put(root, "/tmp"), "step.sh")
    with open(path, "w") as f:
        f.write(script + "\n")
    base = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root",
            "LANG": "C.UTF-8", "CI": "true"}
    base.update(env)
    argv = ["bash", os.path.join(HERE, "clean_root.sh"), "run", CACHE, root, "/usr/bin/env", "--chdir=" + cwd, "-i"]
    argv += ["%s=%s" % kv for kv in base.items()] + ["bash", "--noprofile", "--norc", "-eo", "pipefail", "/tmp/step.sh"]
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    return r.returncode, r.stdout


def read(root, path):
    full = at(root, path)
    return open(full, errors="replace").read() if os.path.exists(full) else ""


def check_kept(root, junit, summary, report, outcome, what):
    if check(read(root, junit).count("<testcase") > 3, what + ": " + junit + " holds the testcases"):
        check("<failure" in read(root, junit) if "VIOLATIONS" in outcome else "<failure" not in read(root, junit),
              what + ": junit.xml's failures match the outcome")
    check(read(root, summary).startswith("## idemproof: orders: " + outcome), what + ": " + summary + " says '" + outcome + "'")
    check(len(read(root, report)) > 1000 and "<html" in read(root, report).lower(), what + ": " + report + " kept")


# ---- GitHub: action.yml -------------------------------------------------
class Expressions:
    """The ${{ }} forms action.yml uses; any other is an error, never a blank."""

    def __init__(self, inputs):
        self.inputs, self.steps = inputs, {}

    def value(self, expr):
        expr = expr.strip()
        m = re.fullmatch(r"inputs\.([\w-]+)", expr)
        if m:
            return self.inputs[m.group(1)]
        m = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expr)
        if m:
            return self.steps[m.group(1)][m.group(2)]
        raise ValueError("the player does not know the expression '%s'" % expr)

    def subst(self, text):
        return re.sub(r"\$\{\{(.*?)\}\}", lambda m: self.value(m.group(1)), str(text))

    def condition(self, expr):
        m = re.fullmatch(r"\s*(\S+)\s*(==|!=)\s*'([^']*)'\s*", expr)
        if not m:
            raise ValueError("the player does not know the condition '%s'" % expr)
        equal = self.value(m.group(1)) == m.group(3)
        return equal if m.group(2) == "==" else not equal


def play_action(root, action, inputs, only_step=None):
    """Plays the action's steps; returns (exit code of the last step played, outputs of step 'run', skipped runs)."""
    ex = Expressions(inputs)
    skipped, code = [], 0
    for n, step in enumerate(action["runs"]["steps"]):
        sid = step.get("id", "step%d" % n)
        if only_step and sid != only_step:
            continue
        if "if" in step and not ex.condition(step["if"]):
            skipped.append(step.get("run", ""))
            continue
        if "uses" in step:
            if not str(step["uses"]).startswith("actions/cache@"):
                raise ValueError("the player does not know the action " + step["uses"])
            # A cache hit: the package is where the cache restores its path.
            path = ex.subst(step["with"]["path"])
            for deb in glob.glob(os.path.join(DEB_DIR, "idemproof_*.deb")):
                shutil.copy(deb, put(root, path))
            ex.steps[sid] = {"cache-hit": "true"}
            continue
        check(step.get("shell") == "bash", "github: step %s says shell: bash" % sid)
        env = {k: ex.subst(v) for k, v in (step.get("env") or {}).items()}
        put(root, "/tmp/runner-temp")
        open(put(root, "/tmp") + "/github-output", "w").close()
        env.update(GITHUB_ACTION_PATH="/action", GITHUB_OUTPUT="/tmp/github-output",
                   GITHUB_STEP_SUMMARY="/tmp/step-summary.md", GITHUB_WORKSPACE=REPO, RUNNER_TEMP="/tmp/runner-temp")
        t = time.time()
        code, out = play(root, ex.subst(step["run"]), env)
        print("github: step %s: exit %d in %.0f s" % (sid, code, time.time() - t))
        if code not in (0, 1):
            print(out[-4000:])
        ex.steps[sid] = dict(line.split("=", 1) for line in read(root, "/tmp/github-output").splitlines() if "=" in line)
        if code != 0:
            break
    return code, ex.steps.get("run", {}), skipped


blocks = doc_blocks()
check({"github-action", "gitlab-include"} <= set(blocks), "docs/ci.md shows the workflow and the .gitlab-ci.yml, found %s" % sorted(blocks))
workflow = yaml.safe_load(blocks.get("github-action", "{}")) or {}
uses = [s for job in (workflow.get("jobs") or {}).values() for s in job.get("steps", []) if "idemproof" in str(s.get("uses", ""))]
action = yaml.safe_load(open(os.path.join(SOURCE, "action.yml")))
check(action["runs"]["using"] == "composite", "action.yml is a composite action")
if check(len(uses) == 1, "docs/ci.md's workflow uses the idemproof action once"):
    inputs = {k: str(v.get("default", "")) for k, v in action["inputs"].items()}
    given = {k: str(v) for k, v in (uses[0].get("with") or {}).items()}
    check(set(given) <= set(inputs), "the workflow's inputs are the action's: %s" % sorted(given))
    check(all(k in given for k, v in action["inputs"].items() if v.get("required")), "the workflow gives every required input")
    inputs.update(given)
    t0 = time.time()
    root = make_root("github")
    shutil.copy(os.path.join(SOURCE, "action.yml"), put(root, "/action"))  # the action's checkout, all it needs on a hit
    code, outputs, skipped = play_action(root, action, inputs)
    check(code == 0, "github: every step exits 0 against the sample service (exit %d)" % code)
    check(outputs.get("exit-code") == "0", "github: the exit-code output is 0 (%s)" % outputs.get("exit-code"))
    check(any("scripts/package.sh" in s for s in skipped), "github: on a cache hit only the package build is skipped")
    check(os.path.exists(at(root, "/usr/bin/idemproof")), "github: the package is installed in the root")
    check_kept(root, REPO + "/" + inputs["junit"], REPO + "/" + inputs["summary"], REPO + "/" + inputs["report"],
               "every property holds (exit 0)", "github")
    check(read(root, "/tmp/step-summary.md") == read(root, REPO + "/" + inputs["summary"]),
          "github: the summary is appended to $GITHUB_STEP_SUMMARY")
    # The same step against the service's bug: a violation, exit 1, files kept.
    for f in (inputs["junit"], inputs["summary"], inputs["report"]):
        os.remove(at(root, REPO + "/" + f))
    os.remove(at(root, "/tmp/step-summary.md"))
    code, outputs, _ = play_action(root, action, dict(inputs, args="--flaw double-execute"), only_step="run")
    check(code == 1, "github, bug double-execute: the run step exits 1 (exit %d)" % code)
    check(outputs.get("exit-code") == "1", "github, bug: the exit-code output is 1")
    check_kept(root, REPO + "/" + inputs["junit"], REPO + "/" + inputs["summary"], REPO + "/" + inputs["report"],
               "VIOLATIONS (exit 1)", "github, bug")
    print("github recipe: %.0f s" % (time.time() - t0))

# ---- GitLab: ci/gitlab/idemproof.gitlab-ci.yml -----------------------------
template = yaml.safe_load(open(os.path.join(SOURCE, "ci/gitlab/idemproof.gitlab-ci.yml")))
user = yaml.safe_load(blocks.get("gitlab-include", "{}")) or {}
check(any("idemproof.gitlab-ci.yml" in str(i) for i in (user.get("include") or [])),
      "docs/ci.md's .gitlab-ci.yml includes the template")
job = dict(template.get("idemproof") or {})
mine = (user.get("idemproof") or {})
job["variables"] = dict(job.get("variables") or {}, **(mine.get("variables") or {}))  # GitLab's include merge
artifacts = job.get("artifacts") or {}
check(artifacts.get("when") == "always", "gitlab keeps the artifacts when the run fails")
check((artifacts.get("reports") or {}).get("junit") in (artifacts.get("paths") or []), "gitlab reads the kept junit file as its test report")
cache_paths = (job.get("cache") or {}).get("paths") or []
if check(cache_paths == [".idemproof-deb/"], "gitlab caches the package (.idemproof-deb/)"):
    t0 = time.time()
    root = make_root("gitlab")
    for deb in glob.glob(os.path.join(DEB_DIR, "idemproof_*.deb")):
        shutil.copy(deb, put(root, REPO + "/.idemproof-deb"))  # the cache, restored
    env = {k: str(v) for k, v in job["variables"].items()}
    env.update(CI_PROJECT_DIR=REPO, GITLAB_CI="true")
    main = "\n".join(list(job.get("before_script") or []) + list(job.get("script") or []))
    code, out = play(root, main, env)
    print(out[-3000:])
    after, _ = play(root, "\n".join(job.get("after_script") or []), env)
    check(code == 0 and after == 0, "gitlab: the job's script and after_script exit 0 (%d, %d)" % (code, after))
    check(os.path.exists(at(root, "/usr/bin/idemproof")), "gitlab: the package is installed in the root")
    for p in artifacts.get("paths") or []:
        check(os.path.exists(at(root, REPO + "/" + p.rstrip("/"))), "gitlab: the artifact " + p + " is there")
    check_kept(root, REPO + "/idemproof-junit.xml", REPO + "/idemproof-summary.md", REPO + "/idemproof-report.html",
               "every property holds (exit 0)", "gitlab")
    env["IDEMPROOF_ARGS"] = "--flaw double-execute"
    code, _ = play(root, "\n".join(job.get("script") or []), env)
    check(code == 1, "gitlab, bug double-execute: the script exits 1 (exit %d)" % code)
    check(read(root, REPO + "/idemproof-summary.md").startswith("## idemproof: orders: VIOLATIONS (exit 1)"),
          "gitlab, bug: the summary says VIOLATIONS")
    print("gitlab recipe: %.0f s" % (time.time() - t0))

for f in failures:
    print("FAIL " + f)
sys.exit(1 if failures else 0)
