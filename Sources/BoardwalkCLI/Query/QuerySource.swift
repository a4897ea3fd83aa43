import Boardwalk
import BoardwalkGenerator

/// The options that choose what queries read: the store (`--db`), or generated sessions in memory.
let generatedOption = OptionSpec(
    "generated", value: "N",
    help: "Query N freshly generated sessions in memory instead of a store (to try the language)")
let seedOption = OptionSpec("seed", value: "S", help: "The seed for --generated (default: 1)")
let generatedOnboardingsOption = OptionSpec(
    "onboardings", value: "K",
    help: "With --generated: how many onboardings sessions are drawn from (default: 6, as generate)")

/// `--tz ZONE`: the zone of time buckets where a query names none.
let timeZoneOption = OptionSpec(
    "tz", value: "ZONE",
    help:
        "The zone of day(t), hour(t), week(t), month(t) where a query names none: UTC (default), +03:00, Europe/Berlin")

extension ParsedArguments {
    /// `--tz`, checked: a usage error names an unknown zone (and the closest known one).
    func timeZone() throws(UsageError) -> String {
        guard let zone = value("tz") else { return "UTC" }
        do {
            _ = try Query.parse("events", timeZone: zone)
        } catch {
            throw UsageError("option '--tz': \(error.message)")
        }
        return zone
    }
}

/// Opens what queries read.
func openQuerySource(_ arguments: ParsedArguments, _ invocation: Invocation) throws -> QuerySource {
    if let n = try arguments.integer("generated", in: 0...1_000_000) {
        if arguments.value("db") != nil {
            throw UsageError("--generated queries sessions made in memory; --db does not apply")
        }
        let seed = try arguments.unsigned("seed") ?? 1
        // The same sessions as `boardwalk generate --sessions N --seed S --onboardings K` writes.
        let onboardings = try arguments.integer("onboardings", in: 1...10_000) ?? 6
        let data = SyntheticData(sessions: n, seed: seed, onboardings: onboardings)
        // What a store would keep of them: now and then the generator repeats an answer within a millisecond, which
        // a store takes for the same event sent twice.
        return QuerySource(
            source: InMemoryEventSource(Store.withoutDuplicates(data.events())),
            completionWords: data.onboardings.map { "\"\($0.id)\"" },
            stats: nil)
    }
    for option in ["seed", "onboardings"] where arguments.value(option) != nil {
        throw UsageError("--\(option) goes with --generated")
    }
    return try openStoreQuerySource(invocation.database(arguments), notes: invocation)
}

/// A source for queries, with what the REPL offers about it.
struct QuerySource {
    var source: any EventSource
    /// Quoted onboarding ids and other words for completion.
    var completionWords: [String]
    /// `.stats` output, when the source is a store.
    var stats: (() throws -> String)?
}
