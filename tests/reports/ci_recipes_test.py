#!/usr/bin/env python3
"""The CI recipes of docs/ci.md, parsed and run (issue #34 item 6).

Each recipe (a fenced yaml block after '<!-- ci-recipe: NAME -->') must parse
as YAML and have the shape its CI reads; its commands then run in a scratch
checkout (scenarios/ and build/ linked from this tree) against the reference
service, the package install and the build left out (this build did it: the
test checks that the recipe builds the three targets the run needs), with
IDEMPROOF_ARGS narrowing the suite to one scenario. Then the files the recipe
keeps must be there and say what the run found.
Usage: ci_recipes_test.py SOURCE_DIR BUILD_DIR
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

SOURCE, BUILD = sys.argv[1], sys.argv[2]
ARGS = "--filter double-submit*"
failures = []
scratch = []  # removed at the end


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def recipes():
    text = open(os.path.join(SOURCE, "docs/ci.md")).read()
    found = {}
    for m in re.finditer(r"<!-- ci-recipe: (\w+) -->\n```yaml\n(.*?)\n```", text, re.S):
        found[m.group(1)] = yaml.safe_load(m.group(2))
    return found


def skipped(command):
    """The install and build commands: checked, not run."""
    if command.startswith("bash scripts/setup.sh --packages-only"):
        return True
    if command.startswith("cmake --build"):
        for target in ("idemproof", "idemproof-ref", "idemproof-stub"):
            check(re.search(r"--target .*\b%s(\s|$)" % re.escape(target), command), "the build builds " + target)
        return True
    return command.startswith("cmake -S")


def scratch_checkout():
    work = tempfile.mkdtemp(prefix="idemproof-ci-recipe-")
    scratch.append(work)
    os.symlink(os.path.join(SOURCE, "scenarios"), os.path.join(work, "scenarios"))
    os.symlink(BUILD, os.path.join(work, "build"))
    return work


def run(commands, work, env, what, expect_failure=False):
    """Runs each command with bash -e in `work`; returns the exit codes."""
    codes = []
    for command in commands:
        if skipped(command):
            continue
        r = subprocess.run(["bash", "-e", "-c", command], cwd=work, env=env, capture_output=True, text=True,
                           timeout=240)
        print("%s: exit %d: %s" % (what, r.returncode, command.splitlines()[0]))
        if r.returncode != 0 and not expect_failure:
            print(r.stdout[-3000:], r.stderr[-3000:])
        codes.append(r.returncode)
    return codes


def check_kept_files(work, what):
    junit = os.path.join(work, "junit.xml")
    summary = os.path.join(work, "summary.md")
    if check(os.path.exists(junit), what + ": junit.xml written"):
        check('name="one_record [create=create_order]"' in open(junit).read(),
              what + ": junit.xml names the bound row's testcases")
    if check(os.path.exists(summary), what + ": summary.md written"):
        text = open(summary).read()
        check(text.startswith("## idemproof: reference: every property holds (exit 0)"), what + ": summary.md outcome")
        check("| client | " in text, what + ": summary.md has the client layer's row")
    check(os.path.getsize(os.path.join(work, "report.html")) > 1000 if os.path.exists(os.path.join(work, "report.html"))
          else False, what + ": report.html collected")
    return summary


found = recipes()
check(sorted(found) == ["github", "gitlab"], "docs/ci.md has the github and gitlab recipes, found %s" % sorted(found))

# GitHub Actions.
gh = found.get("github") or {}
job = (gh.get("jobs") or {}).get("idemproof") or {}
steps = job.get("steps") or []
check(gh.get("on") or gh.get(True), "the workflow says when it runs")  # YAML 1.1 reads a bare `on` as true
check(all(("uses" in s) != ("run" in s) for s in steps), "every workflow step has exactly one of uses or run")
upload = [s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact")]
if check(len(upload) == 1, "the workflow uploads one artifact"):
    paths = upload[0]["with"]["path"].split()
    check({"report.html", "junit.xml"} <= set(paths), "the artifact holds report.html and junit.xml")
    check(upload[0].get("if") == "always()", "the upload runs when the suite fails too")
work = scratch_checkout()
env = dict(os.environ, IDEMPROOF_ARGS=ARGS, GITHUB_STEP_SUMMARY=os.path.join(work, "step-summary.md"))
codes = run([s["run"] for s in steps if "run" in s], work, env, "github")
check(codes and all(c == 0 for c in codes), "every run: step of the workflow exits 0 against the reference: %s" % codes)
summary = check_kept_files(work, "github")
if os.path.exists(summary):
    check(open(env["GITHUB_STEP_SUMMARY"]).read() == open(summary).read(),
          "github: the run appended its summary to $GITHUB_STEP_SUMMARY")

# The same step against a broken service: exit 1, and the summary shows the
# violation's evidence and the command that reruns it.
work = scratch_checkout()
env = dict(os.environ, IDEMPROOF_ARGS=ARGS + " --flaw empty-replay",
           GITHUB_STEP_SUMMARY=os.path.join(work, "step-summary.md"))
suite = [s["run"] for s in steps if "run" in s and "idemproof run" in s["run"]]
codes = run(suite, work, env, "github, flaw empty-replay", expect_failure=True)
check(codes == [1], "the suite step exits 1 against the flawed reference: %s" % codes)
if check(os.path.exists(os.path.join(work, "summary.md")), "github, flaw: summary.md written"):
    text = open(os.path.join(work, "summary.md")).read()
    check(text.startswith("## idemproof: reference: VIOLATIONS (exit 1)"), "github, flaw: summary.md outcome")
    check("- **identical\\_replay**: key " in text and "answered 200 \\{\"status\":\"duplicate\"\\}" in text,
          "github, flaw: the violation's evidence is in the summary")
    check(re.search(r"Reproduce:\n\n```sh\nidemproof run scenarios/client/double-submit.yaml --target "
                    r"scenarios/targets/reference.yaml --seed \d+ --filter 'double-submit\[create_order\]' "
                    r"--flaw empty-replay\n```", text), "github, flaw: the reproduce command is in the summary")
    check(open(env["GITHUB_STEP_SUMMARY"]).read() == text, "github, flaw: the step summary too")

# GitLab CI.
gl = (found.get("gitlab") or {}).get("idemproof") or {}
artifacts = gl.get("artifacts") or {}
check(artifacts.get("when") == "always", "gitlab keeps the artifacts when the suite fails")
check({"report.html", "junit.xml"} <= set(artifacts.get("paths") or []), "gitlab keeps report.html and junit.xml")
check((artifacts.get("reports") or {}).get("junit") == "junit.xml", "gitlab reads junit.xml as its test report")
work = scratch_checkout()
env = dict(os.environ, IDEMPROOF_ARGS=ARGS)
env.pop("GITHUB_STEP_SUMMARY", None)
codes = run(list(gl.get("script") or []) + list(gl.get("after_script") or []), work, env, "gitlab")
check(codes and all(c == 0 for c in codes), "every script line of the GitLab job exits 0 against the reference: %s" % codes)
check_kept_files(work, "gitlab")

for f in failures:
    print("FAIL " + f)
for work in scratch:
    shutil.rmtree(work, ignore_errors=True)
sys.exit(1 if failures else 0)
