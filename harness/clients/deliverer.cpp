#include "clients/deliverer.h"

#include <algorithm>
#include <thread>

namespace idemproof::runtime {

bool PushDeliverer::Sleep(Duration d) const {
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
    if (cancel_ != nullptr && cancel_->load()) return false;
    std::this_thread::sleep_for(std::min<Duration>(until - std::chrono::steady_clock::now(),
                                                   std::chrono::milliseconds(20)));
  }
  return cancel_ == nullptr || !cancel_->load();
}

DeliveryOutcome PushDeliverer::Deliver(const DeliveryPlan& plan, const DeliveryObserver& observer) {
  DeliveryOutcome out;
  if (plan.consumers.empty()) return out;
  // A fresh connection per push: a redelivery is a new attempt, as a broker's.
  std::size_t next_consumer = 0;
  for (int round = 1; round <= plan.max_rounds; ++round) {
    if (round > 1 && !Sleep(plan.every)) break;
    if (cancel_ != nullptr && cancel_->load()) break;
    std::vector<Push> pushes;
    std::vector<OutgoingRequest> requests;
    for (int c = 0; c < plan.copies; ++c) {
      Push p;
      p.round = round;
      p.copy = c;
      p.consumer = next_consumer++ % plan.consumers.size();
      pushes.push_back(p);
      requests.push_back(plan.consumers[p.consumer]);
    }
    for (std::size_t i = 0; i < pushes.size(); ++i) {
      if (observer.on_push) observer.on_push(pushes[i], requests[i]);
    }
    std::vector<HttpExchange> answers;
    if (requests.size() == 1) {
      HttpClient client(cancel_);
      answers.push_back(client.send(requests[0]));
    } else {
      HttpClient client(cancel_);
      answers = client.send_concurrently(requests);
    }
    out.rounds = round;
    std::vector<std::size_t> order(answers.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return answers[a].end_ns < answers[b].end_ns; });
    for (std::size_t i : order) {
      ++out.pushes;
      const HttpExchange& e = answers[i];
      const bool ack = e.outcome == HttpOutcome::kAnswered && e.status >= 200 && e.status < 300;
      if (ack && out.acks_lost < plan.lose_ack) {
        pushes[i].ack_lost = true;
        ++out.acks_lost;
      } else if (ack) {
        out.acked = true;
      }
      if (observer.on_done) observer.on_done(pushes[i], e);
    }
    if (out.acked) break;
  }
  return out;
}

}  // namespace idemproof::runtime
