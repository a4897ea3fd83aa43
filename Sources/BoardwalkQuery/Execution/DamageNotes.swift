import BoardwalkCodec
import BoardwalkModel
import BoardwalkStore

/// The note of a run that read around damaged blocks (``Query/RunOptions/ignoreDamaged``): how many blocks and
/// events it skipped, and where.
enum DamageNotes {
    /// How many blocks the note names one by one.
    static let maxBlocksNamed = 5

    /// One note for `blocks` (none when empty): the count of blocks and of the events known skipped, then each
    /// block's onboarding, screen, time range and events, up to ``maxBlocksNamed``.
    static func notes(_ blocks: [DamagedBlocks.Block]) -> [QueryError] {
        guard !blocks.isEmpty else { return [] }
        let known = blocks.compactMap(\.eventsSkipped)
        let events: String
        if known.isEmpty {
            events = "events skipped: unknown"
        } else {
            let total = known.reduce(0, +)
            let unknown = blocks.count - known.count
            events =
                "\(total) event\(total == 1 ? "" : "s") skipped"
                + (unknown > 0
                    ? " (and the events of \(unknown) block\(unknown == 1 ? "" : "s") whose header is damaged)" : "")
        }
        var places = blocks.prefix(maxBlocksNamed).map(place)
        if blocks.count > maxBlocksNamed { places.append("and \(blocks.count - maxBlocksNamed) more") }
        let count = "\(blocks.count) damaged block\(blocks.count == 1 ? "" : "s")"
        return [
            QueryError(
                .note,
                "the answer leaves out \(count) of the store, read around (--ignore-damaged): \(events); "
                    + places.joined(separator: "; ")
                    + "; `boardwalk check` lists the damage, `boardwalk export --salvage` reads what is left")
        ]
    }

    /// Where a block is: `onboarding "onb_1", screen 2, 2026-11-10T10:00:00.000000Z to …, 14 events`.
    static func place(_ block: DamagedBlocks.Block) -> String {
        let group: String
        if block.onboardingRef == RecordFormat.noOnboarding {
            group = "events without an onboarding"
        } else if let name = block.onboarding {
            group = "onboarding \"\(name.count > 80 ? name.prefix(80) + "…" : name)\", screen \(block.screen)"
        } else {
            group = "onboarding #\(block.onboardingRef), screen \(block.screen)"
        }
        let until = block.to.map { " to \($0)" } ?? " (its end unknown)"
        let events = block.eventsSkipped.map { ", \($0) event\($0 == 1 ? "" : "s")" } ?? ""
        return "\(group), \(block.from)\(until)\(events)"
    }
}
