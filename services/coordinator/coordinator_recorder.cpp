// The coordinator's recorder: the telemetry of the rig and the dynamics of each cycle merged
// into one row, recorded complete and in cycle order into the run's Experiment (and so its
// journal); the actuator's latencies and watchdog kept for summary.json.
#include <algorithm>

#include "coordinator/coordinator_component.hpp"

namespace hyloop::services {

namespace {

constexpr unsigned kRowParts = (1U << kRigSender) | (1U << kDynamicsSender);

}  // namespace

void Coordinator::record_row(const std::vector<double>& row) {
  recorder_->record_cycle(row);
  cycles_recorded_.add();
  // A run that can no longer be recorded (a full disk, an I/O error) is stopped: the end of the
  // run says why (RunRecording::complete throws the journal's error).
  if (!recording_failed_ && recording_ && !recording_->journal().error().empty()) {
    recording_failed_ = true;
    stop_.store(true);
  }
}

void Coordinator::keep_row_locked(std::uint64_t cycle, const std::vector<double>& row) {
  recent_rows_[cycle % kRecentRows] = row;
  recent_cycles_[cycle % kRecentRows] = cycle;
  status_.set_cycle(cycle + 1);
}

void Coordinator::record(const v2::Telemetry& t) {
  const std::uint32_t sender = t.header().sender();
  if (t.names_size() > 0) learn_columns(sender, t);
  if (sender == kRigSender) {
    cycles_received_.add();
  }
  misses_[sender] = t.deadline_misses();
  rejected_[sender] = t.rejected();
  realtime_[sender] = t.realtime();
  if (sender == kRigSender) {
    rig_last_cycle_ = std::max(rig_last_cycle_, t.header().cycle());
  }
  if ((sender == kRigSender || sender == kDynamicsSender) && t.values_size() > 0) {
    merge_row_part(sender, t);  // a message without values carries only its event
  } else if (sender == kActuatorSender) {
    note_actuator(t);
  }
  if (t.event() != v2::LOOP_EVENT_NONE) note_event(t);
  record_complete_rows();
}

void Coordinator::learn_columns(std::uint32_t sender, const v2::Telemetry& t) {
  std::vector<std::string>& names = names_[sender];
  names.assign(t.names().begin(), t.names().end());
  std::vector<int>& cols = columns_[sender];
  cols.assign(names.size(), -1);
  const std::vector<std::string>& headers = record_columns_;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto it = std::find(headers.begin(), headers.end(), names[i]);
    if (it != headers.end()) cols[i] = static_cast<int>(it - headers.begin());
  }
}

void Coordinator::note_late_minute(std::uint64_t cycle) {
  const double step = recorder_->step_size();
  if (!(step > 0.0)) return;
  const auto minute = static_cast<std::size_t>(static_cast<double>(cycle) * step / 60.0);
  if (minute >= kLateMinutes) return;
  if (late_by_minute_.size() <= minute) late_by_minute_.resize(minute + 1, late_commands_);
  late_by_minute_[minute] = std::max(late_by_minute_[minute], late_commands_);
}

void Coordinator::merge_row_part(std::uint32_t sender, const v2::Telemetry& t) {
  const std::vector<int>& cols = columns_[sender];
  const std::vector<std::string>& names = names_[sender];
  Pending& p = pending_[t.header().cycle()];
  p.row.resize(record_columns_.size());
  for (int i = 0; i < t.values_size() && i < static_cast<int>(cols.size()); ++i) {
    if (cols[static_cast<std::size_t>(i)] >= 0) {
      p.row[static_cast<std::size_t>(cols[static_cast<std::size_t>(i)])] = t.values(i);
    } else if (names[static_cast<std::size_t>(i)] == "late_commands[-]") {
      late_commands_ = static_cast<std::uint64_t>(t.values(i));
      note_late_minute(t.header().cycle());
    }
  }
  p.parts |= 1U << sender;
}

void Coordinator::note_actuator(const v2::Telemetry& t) {
  const std::vector<std::string>& names = names_[kActuatorSender];
  for (int i = 0; i < t.values_size() && i < static_cast<int>(names.size()); ++i) {
    const std::string& n = names[static_cast<std::size_t>(i)];
    if (n == "latency[ns]" && t.values(i) > 0.0) {
      latencies_.add(static_cast<std::int64_t>(t.values(i)));
    } else if (n == "estop_latency[ns]" && t.values(i) > 0.0) {
      estop_latency_ns_ = static_cast<std::int64_t>(t.values(i));
    } else if (n == "watchdog[-]" && t.values(i) > 0.0) {
      ++watchdog_cycles_;
    }
  }
}

void Coordinator::note_event(const v2::Telemetry& t) {
  if (t.event() == v2::LOOP_EVENT_STOP && !stop_cycle_) {
    // The last row of the dynamics: recorded in order once the rig's part of it is in too (the
    // rig's telemetry of that cycle may still be on its way).
    stop_cycle_ = t.header().cycle();
    stop_event_ = t.event_detail();
    stop_seen_at_ = stop_rules::Clock::now();
  }
  loop_event_ = t.event();
  loop_event_detail_ = t.event_detail();
}

void Coordinator::record_dynamics_stop(bool force) {
  if (!stop_cycle_ || stop_recorded_) return;
  if (force && next_record_ <= *stop_cycle_) {
    record_row(pending_[*stop_cycle_].row);  // without the rig's part
    pending_.erase(*stop_cycle_);
    next_record_ = *stop_cycle_ + 1;
  }
  recorder_->record_stop(stop_event_);
  recording_->journal().event("stop", stop_event_);
  stop_recorded_ = true;
}

void Coordinator::record_complete_rows() {
  for (;;) {
    auto it = pending_.find(next_record_);
    if (it != pending_.end() && it->second.parts == kRowParts) {
      record_row(it->second.row);
      {
        const std::lock_guard<std::mutex> lock(mutex_);
        keep_row_locked(next_record_, it->second.row);
        status_.set_virtual_time_s(it->second.row.front());
      }
      if (next_record_ % 16 == 0) changed_.notify_all();
      pending_.erase(it);
      ++next_record_;
      if (stop_cycle_ && next_record_ > *stop_cycle_) record_dynamics_stop(false);
      continue;
    }
    if (mode_ == v1::CLOCK_MODE_REAL_TIME && !pending_.empty() &&
        pending_.rbegin()->first > next_record_ + 50) {
      pending_.erase(next_record_);
      ++skipped_cycles_;
      ++next_record_;
      if (stop_cycle_ && next_record_ > *stop_cycle_) record_dynamics_stop(false);
      continue;
    }
    break;
  }
}

void Coordinator::flush_incomplete() {
  while (!pending_.empty()) {
    const auto it = pending_.begin();
    if (it->first < next_record_) {
      pending_.erase(it);
      continue;
    }
    if (it->first == next_record_ && it->second.parts == kRowParts) {
      recorder_->record_cycle(it->second.row);
      {
        const std::lock_guard<std::mutex> lock(mutex_);
        keep_row_locked(next_record_, it->second.row);
      }
      pending_.erase(it);
    } else {
      ++skipped_cycles_;
      if (it->first == next_record_) pending_.erase(it);
    }
    ++next_record_;
  }
}

}  // namespace hyloop::services
