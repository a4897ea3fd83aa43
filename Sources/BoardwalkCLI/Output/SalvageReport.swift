import Boardwalk

/// What `export --salvage` skipped or kept unverified: each on stderr as it is met (the first 100), and the totals.
struct SalvageReport {
    static let listed = 100
    /// Events skipped one by one: a record or string that does not decode, or one the output format cannot hold.
    private(set) var events = 0
    /// Blocks cut short (the rest after the damage) or lost whole (a damaged key).
    private(set) var blocks = 0
    /// Blocks whose every event was kept, though their end does not check.
    private(set) var unverified = 0
    /// LMDB pages whose blocks (or strings, or counters) could not be read: damaged, or past the end of the file.
    private(set) var pages = 0
    private var said = 0

    var isEmpty: Bool { events == 0 && blocks == 0 && unverified == 0 && pages == 0 }

    mutating func add(_ damage: SalvageDamage, to invocation: Invocation) {
        switch damage.extent {
        case .event: events += 1
        case .block, .key: blocks += 1
        case .blockEnd: unverified += 1
        case .page: pages += 1
        }
        say((damage.lostEvents ? "skipped: " : "kept unverified: ") + damage.description, invocation)
    }

    /// An event that decoded but that the output format cannot hold.
    mutating func refuse(seq: UInt64, _ error: any Error, to invocation: Invocation) {
        events += 1
        say("skipped: one event (seq \(seq)), which the format cannot hold: \(error)", invocation)
    }

    private mutating func say(_ line: String, _ invocation: Invocation) {
        said += 1
        if said <= Self.listed {
            invocation.err(line + "\n")
        } else if said == Self.listed + 1 {
            invocation.err("… (the rest are counted below, not listed; 'boardwalk check' lists the store's damage)\n")
        }
    }

    /// "; skipped 2 events and the rest of 1 block", or "; nothing was skipped".
    var summary: String {
        if isEmpty { return "; nothing was skipped" }
        var parts: [String] = []
        if events > 0 { parts.append(Units.counted(events, "event")) }
        if blocks > 0 { parts.append("the rest of " + Units.counted(blocks, "damaged block")) }
        if pages > 0 { parts.append("what " + Units.counted(pages, "LMDB page") + " held") }
        var text = parts.isEmpty ? "" : "; skipped " + parts.joined(separator: " and ")
        if unverified > 0 {
            text +=
                "; kept, unverified, the events of " + Units.counted(unverified, "block") + " whose end does not check"
        }
        return text
    }

    /// What a salvage that read pages found off the trees, and how many of the events the store counted it did not
    /// write: "; 71 blocks (6992 events) were read from pages the trees do not reach; the store counted 8724 events,
    /// 62 of them not read". Empty when there is nothing to say.
    static func outcome(saved: Int, summary: SalvageSummary?) -> String {
        guard let summary else { return "" }
        var text = ""
        if summary.recoveredBlocks > 0 {
            text +=
                "; \(Units.counted(summary.recoveredBlocks, "block")) (\(Units.counted(summary.recoveredEvents, "event")))"
                + " were read from pages the trees do not reach"
        }
        if let stored = summary.storedEvents, stored > UInt64(saved) {
            text +=
                "; the store counted \(Units.counted(Int(stored), "event")), \(Int(stored) - saved) of them not read"
        }
        return text
    }
}
