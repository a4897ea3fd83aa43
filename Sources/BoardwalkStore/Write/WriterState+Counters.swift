import BoardwalkCodec
import BoardwalkModel

extension WriterState {
    struct OnboardingAccumulator {
        var events: UInt64 = 0
        var minTime = Int64.max
        var maxTime = Int64.min
        var maxTotalScreens: UInt32 = 0
    }

    /// `onboardings`: onboarding → events (8) ‖ min time (8) ‖ max time (8) ‖ max total screens (4).
    func writeOnboardingStats(_ txn: Transaction) throws {
        let key = scratch
        let value = scratch + 16
        for (onboarding, add) in onboardingStats {
            key.storeBE(onboarding, at: 0)
            let k = UnsafeRawBufferPointer(start: key, count: 4)
            var total = add
            if let v = try txn.get(dbs.onboardings, k) {
                let old = try OnboardingSummaryRecord(v)
                total.events += old.events
                total.minTime = min(total.minTime, old.minTime)
                total.maxTime = max(total.maxTime, old.maxTime)
                total.maxTotalScreens = max(total.maxTotalScreens, old.maxTotalScreens)
            }
            value.storeBE(total.events, at: 0)
            value.storeBE(Layout.timeBits(total.minTime), at: 8)
            value.storeBE(Layout.timeBits(total.maxTime), at: 16)
            value.storeBE(total.maxTotalScreens, at: 24)
            try txn.put(dbs.onboardings, k, UnsafeRawBufferPointer(start: value, count: OnboardingSummaryRecord.size))
        }
    }

    func writeCounters(
        _ txn: Transaction, kindCounts: [UInt64], duplicates: UInt64, sessions: UInt64, inferred: UInt64,
        minTime: Int64, maxTime: Int64
    ) throws {
        func add(_ key: String, _ n: UInt64) throws {
            if n == 0 { return }
            try txn.putUInt64(dbs.meta, key, (try txn.getUInt64(dbs.meta, key) ?? 0) &+ n)
        }
        try txn.putUInt64(dbs.meta, Layout.metaNextSeq, nextSeq)
        try add(Layout.metaEvents, UInt64(entries.count))
        try add(Layout.metaDuplicates, duplicates)
        try add(Layout.metaSessions, sessions)
        try add(Layout.metaInferredSessions, inferred)
        for (i, kind) in EventKind.allCases.enumerated() { try add(Layout.metaKind(kind), kindCounts[i]) }
        if !entries.isEmpty {
            let oldMin = try txn.getUInt64(dbs.meta, Layout.metaMinTime).map { Layout.time(fromBits: $0) } ?? .max
            let oldMax = try txn.getUInt64(dbs.meta, Layout.metaMaxTime).map { Layout.time(fromBits: $0) } ?? .min
            try txn.putUInt64(dbs.meta, Layout.metaMinTime, Layout.timeBits(min(oldMin, minTime)))
            try txn.putUInt64(dbs.meta, Layout.metaMaxTime, Layout.timeBits(max(oldMax, maxTime)))
        }
    }
}
