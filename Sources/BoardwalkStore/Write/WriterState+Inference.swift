import BoardwalkCodec
import BoardwalkModel

extension WriterState {
    struct InferState {
        var session: UInt32
        var lastTime: Int64
        /// The session has seen only start events so far (`onboarding_loaded`, `onboarding_started`).
        var fresh: Bool
    }

    /// The session of an event that has none (semantics rule 10): per (profile, onboarding), a new one
    /// starts at the first event, after 30 minutes without events, or at a start event
    /// (`onboarding_loaded`, `onboarding_started`) once the session has seen other events, unless the start event
    /// is less than 30 minutes before the session's last event. Events are taken in arrival order; any other event
    /// older than the session's last event joins it.
    func inferSession(for event: Event, seq: UInt64, interner: inout Interner) throws -> (String, Bool) {
        var profile = RecordFormat.absent
        if let p = event.profile { profile = try interner.intern(p) }
        var onboarding = RecordFormat.noOnboarding
        if let meta = event.meta { onboarding = try interner.intern(meta.onboardingID) }
        let key = UInt64(profile) << 32 | UInt64(onboarding)
        let time = event.time.microseconds
        let isStart: Bool
        switch event.payload {
        case .onboardingLoaded, .analytics(.onboardingStarted): isStart = true
        default: isStart = false
        }
        var state = pendingInfer[key] ?? inferCache[key]
        if state == nil, let txn {
            let k = scratch + 1536
            k.storeBE(key, at: 0)
            if let v = try txn.get(dbs.inferred, UnsafeRawBufferPointer(start: k, count: 8)) {
                guard v.count == 13 else {
                    throw StoreError(.corrupt, "an inferred-session entry is \(v.count) bytes, not 13")
                }
                state = InferState(session: v.be32(0), lastTime: Layout.time(fromBits: v.be64(4)), fresh: v[12] != 0)
            }
        }
        // A start event begins a new session once the current one has seen other events, when it is at or after
        // the session's last event, or 30 minutes or more before it (a whole earlier session arriving late); a late
        // start event within 30 minutes before the last event belongs to the session it precedes and joins it (one
        // of its own would take later late events from that session).
        let startsAnother =
            isStart
            && state.map { !$0.fresh && (time >= $0.lastTime || $0.lastTime &- time >= Layout.sessionGap) } ?? true
        if var current = state, time &- current.lastTime < Layout.sessionGap, !startsAnother,
            let name = interner.table.string(for: current.session)
        {
            current.lastTime = max(current.lastTime, time)
            current.fresh = current.fresh && isStart
            pendingInfer[key] = current
            return (name, false)
        }
        let name = "inferred:\(seq)"
        let id = try interner.intern(name)
        pendingInfer[key] = InferState(session: id, lastTime: time, fresh: isStart)
        return (name, true)
    }

    func writeInference(_ txn: Transaction) throws {
        let key = scratch
        let value = scratch + 16
        for (k, state) in pendingInfer {
            key.storeBE(k, at: 0)
            value.storeBE(state.session, at: 0)
            value.storeBE(Layout.timeBits(state.lastTime), at: 4)
            value.storeBytes(of: state.fresh ? 1 : 0, toByteOffset: 12, as: UInt8.self)
            try txn.put(
                dbs.inferred, UnsafeRawBufferPointer(start: key, count: 8),
                UnsafeRawBufferPointer(start: value, count: 13))
        }
    }
}
