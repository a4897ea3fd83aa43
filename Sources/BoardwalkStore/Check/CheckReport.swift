import BoardwalkCodec
import BoardwalkModel

/// What ``Store/check()`` found.
public struct CheckReport: Sendable, CustomStringConvertible {
    /// The first problems found (at most ``maxListed``), each a sentence naming the database and key.
    public var problems: [String] = []
    /// How many problems were found in all.
    public var problemCount = 0
    /// Events read from the `events` database.
    public var eventsChecked = 0
    /// Blocks read from the `events` database.
    public var blocksChecked = 0
    /// Problems beyond this many are counted, not listed.
    public static let maxListed = 100

    /// Whether the store is consistent.
    public var isOK: Bool { problemCount == 0 }

    mutating func add(_ problem: String) {
        problemCount += 1
        if problems.count < CheckReport.maxListed { problems.append(problem) }
    }

    /// `ok: N events checked`, or the problem count and one problem per line.
    public var description: String {
        if isOK { return "ok: \(eventsChecked) events checked" }
        // When the B-tree pages are damaged the check stops before reading events: "in 0 events" would read as an
        // empty store.
        let scope = eventsChecked > 0 ? "in \(eventsChecked) events checked" : "(found before any event could be read)"
        var lines = ["\(problemCount) problem(s) \(scope):"]
        lines += problems.map { "  " + $0 }
        if problemCount > problems.count { lines.append("  … and \(problemCount - problems.count) more") }
        return lines.joined(separator: "\n")
    }
}
