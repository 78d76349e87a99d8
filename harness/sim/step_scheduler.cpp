#include "sim/step_scheduler.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <stdexcept>

namespace idemproof::sim {

// A request's stack: mmap'd, with a guard page below it so that an overflow
// faults instead of corrupting the heap. SQLite's parser and the JSON code
// run on it: 512 KiB, touched lazily.
struct StepScheduler::Stack {
  static constexpr std::size_t kSize = 512 * 1024;

  Stack() {
    page_ = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    base_ = ::mmap(nullptr, kSize + page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (base_ == MAP_FAILED) throw std::runtime_error("StepScheduler: cannot map a request stack");
    ::mprotect(base_, page_, PROT_NONE);
  }
  ~Stack() { ::munmap(base_, kSize + page_); }
  Stack(const Stack&) = delete;
  Stack& operator=(const Stack&) = delete;

  void* top() const { return static_cast<char*>(base_) + page_; }

 private:
  void* base_ = nullptr;
  std::size_t page_ = 0;
};

struct StepScheduler::Request {
  StepScheduler* scheduler = nullptr;
  RequestId id = 0;
  std::string title;
  std::function<HttpResponse()> run;
  std::unique_ptr<Stack> stack;
  ucontext_t context{};
  std::string waiting_at;  // label of the step point it waits at
  bool finished = false;   // answered, abandoned or failed
  bool abandoned = false;
  std::optional<HttpResponse> answer;
  std::string failure;
};

// Mapping, guarding and faulting in a stack for every request cost more than
// most steps; a few spares per thread cover the in-flight limit.
constexpr std::size_t kSpareStacksPerThread = 8;

std::vector<std::unique_ptr<StepScheduler::Stack>>& StepScheduler::SpareStacks() {
  thread_local std::vector<std::unique_ptr<Stack>> spares;
  return spares;
}

StepScheduler::StepScheduler() = default;

StepScheduler::~StepScheduler() { AbandonAll(); }

StepScheduler::RequestId StepScheduler::Send(std::string title,
                                             std::function<HttpResponse()> run) {
  auto request = std::make_unique<Request>();
  Request& r = *request;
  r.scheduler = this;
  r.id = static_cast<RequestId>(requests_.size()) + 1;
  r.title = std::move(title);
  r.run = std::move(run);
  if (auto& spares = SpareStacks(); !spares.empty()) {
    r.stack = std::move(spares.back());
    spares.pop_back();
  } else {
    r.stack = std::make_unique<Stack>();
  }
  if (::getcontext(&r.context) != 0) throw std::runtime_error("StepScheduler: getcontext failed");
  r.context.uc_stack.ss_sp = r.stack->top();
  r.context.uc_stack.ss_size = Stack::kSize;
  r.context.uc_link = &driver_;  // Entry returning resumes the driver
  const auto address = reinterpret_cast<std::uintptr_t>(&r);
  ::makecontext(&r.context, reinterpret_cast<void (*)()>(&StepScheduler::Entry), 2,
                static_cast<unsigned>(address >> 32), static_cast<unsigned>(address & 0xffffffffu));
  requests_.push_back(std::move(request));
  trace_.push_back({r.id, "r" + std::to_string(r.id) + " " + r.title + " sent", false});
  current_line_ = trace_.size() - 1;
  RunUntilPause(r);
  return r.id;
}

void StepScheduler::Advance(RequestId id, bool drained) {
  Request& r = *requests_.at(static_cast<std::size_t>(id - 1));
  if (r.finished) throw std::logic_error("StepScheduler::Advance: request not in flight");
  trace_.push_back({r.id, "r" + std::to_string(r.id) + " " + r.title + ": " + r.waiting_at, drained});
  current_line_ = trace_.size() - 1;
  RunUntilPause(r);
}

std::vector<StepScheduler::RequestId> StepScheduler::AbandonAll() {
  std::vector<RequestId> abandoned = InFlight();
  crashing_ = true;
  for (RequestId id : abandoned) RunUntilPause(*requests_[static_cast<std::size_t>(id - 1)]);
  crashing_ = false;
  return abandoned;
}

std::vector<StepScheduler::RequestId> StepScheduler::InFlight() const {
  std::vector<RequestId> out;
  for (const auto& r : requests_) {
    if (!r->finished) out.push_back(r->id);
  }
  return out;
}

const std::optional<HttpResponse>& StepScheduler::Answer(RequestId id) const {
  return requests_.at(static_cast<std::size_t>(id - 1))->answer;
}

const std::string& StepScheduler::Failure(RequestId id) const {
  return requests_.at(static_cast<std::size_t>(id - 1))->failure;
}

void StepScheduler::Log(std::string text) {
  trace_.push_back({0, std::move(text), false});
  current_line_ = trace_.size() - 1;
}

void StepScheduler::RunUntilPause(Request& r) {
  running_ = &r;
  if (::swapcontext(&driver_, &r.context) != 0) throw std::runtime_error("StepScheduler: swapcontext failed");
  running_ = nullptr;
  if (r.finished && r.stack) {
    if (auto& spares = SpareStacks(); spares.size() < kSpareStacksPerThread) spares.push_back(std::move(r.stack));
    r.stack.reset();
    r.run = nullptr;
  }
}

void StepScheduler::Entry(unsigned hi, unsigned lo) {
  auto& r = *reinterpret_cast<Request*>((static_cast<std::uintptr_t>(hi) << 32) | lo);
  // Everything is caught here: an exception must not unwind past the first
  // frame of a fiber's stack.
  try {
    r.answer = r.run();
  } catch (const ProcessCrash&) {
    r.abandoned = true;
  } catch (const std::exception& e) {
    r.failure = e.what();
  } catch (...) {
    r.failure = "an exception of unknown type";
  }
  r.finished = true;
  // Returning resumes the driver (uc_link).
}

void StepScheduler::StepPoint(std::string_view label) {
  Request* r = running_;
  if (r == nullptr) return;
  r->waiting_at = label;
  if (::swapcontext(&r->context, &driver_) != 0) throw std::runtime_error("StepScheduler: swapcontext failed");
  // Resumed by the driver (running_ is r again).
  if (crashing_) throw ProcessCrash{};
}

void StepScheduler::Note(std::string_view text) {
  if (trace_.empty()) return;
  trace_[current_line_].text += text;
}

StepScheduler::RequestId StepScheduler::Current() const { return running_ ? running_->id : 0; }

}  // namespace idemproof::sim
