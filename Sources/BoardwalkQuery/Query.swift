import BoardwalkModel
import BoardwalkStore
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A parsed and type-checked query of the Boardwalk query language (see `docs/query-language.md`).
///
/// ```swift
/// let query = try Query.parse(#"sessions | where onboarding == "onb_1" | funnel"#)
/// let table = try query.run(on: source)
/// print(table.render(.table))
/// ```
public struct Query: Sendable {
    /// The query text as given.
    public let text: String
    let checked: CheckedQuery

    /// Parses and type-checks a query. Nothing is read.
    /// - Parameters:
    ///   - text: the query.
    ///   - timeZone: the zone of `hour(t)`, `day(t)`, `week(t)` and `month(t)` where the call names none: `UTC`, a
    ///     fixed offset (`+03:00`) or a zone of the time-zone database (`Europe/Berlin`).
    /// - Throws: ``QueryError`` of kind `.syntax` or `.type`, pointing into `text`; `.type` without a place for
    ///   an unknown `timeZone`.
    /// - Complexity: O(n) in the length of the text.
    public static func parse(_ text: String, timeZone: String = "UTC") throws(QueryError) -> Query {
        guard let zone = BucketZone(timeZone) else {
            let hint = Suggestions.didYouMean(timeZone, in: BucketZone.knownNames)
            throw QueryError(.type, "unknown time zone `\(timeZone)`\(hint)", in: text)
        }
        let ast = try Parser.parse(text)
        return Query(text: text, checked: try TypeChecker.check(ast, timeZone: zone))
    }

    /// The syntax tree, every node with its byte range in ``text``.
    package var syntax: QueryAST { checked.ast }

    /// Whether the query reads `events` or `sessions`.
    package var source: SourceKind { checked.source }

    /// Whether the query ends with `| explain`: ``run(on:options:)`` then returns the plan instead of results.
    package var isExplain: Bool { checked.explain }
    /// What the checker noticed that is not an error, each a ``QueryError`` of kind ``QueryError/Kind/note`` with
    /// its place in the query: an event name close to a known one (`name == "screen_presnted"`), which would
    /// match nothing. The query runs as written.
    public var notes: [QueryError] { checked.notes }

    /// ``notes``, and what `source` shows the query will not find: an onboarding id compared with `onboarding`
    /// (`==`, `!=`, `in`) that has no events in the source (a typo, or the wrong store, would otherwise give an
    /// empty or unfiltered result without a word), with the closest id that has events when one is close. In
    /// the order of their places in the query; after ``maxOnboardingNotes`` such ids, one more note counts the
    /// rest. A source that cannot list its onboardings adds nothing, nor does one that fails to.
    /// - Complexity: O(onboardings) reads of the source (the store keeps one entry per onboarding) and O(literals)
    ///   set lookups, plus an edit distance per onboarding for each id noted.
    public func notes(on source: some EventSource) -> [QueryError] {
        guard !checked.onboardingLiterals.isEmpty, let names = (try? source.onboardingNames()) ?? nil else {
            return checked.notes
        }
        let known = Set(names)
        var notes = checked.notes
        var noted = Set<String>(), unnoted = 0
        let label =
            names.isEmpty
            ? "no events here have an onboarding"
            : "\(names.count) onboarding\(names.count == 1 ? " has" : "s have") events"
        for literal in checked.onboardingLiterals
        where !known.contains(literal.value) && noted.insert(literal.value).inserted {
            guard noted.count <= Query.maxOnboardingNotes else {
                unnoted += 1
                continue
            }
            let hint = literal.value.isEmpty ? "" : Suggestions.didYouMean(literal.value, in: names)
            notes.append(
                QueryError(
                    .note, "no events have onboarding `\(literal.value)`\(hint)", at: literal.range, in: text,
                    label: label))
        }
        notes = notes.enumerated().sorted { a, b in
            (a.element.range?.lowerBound ?? 0, a.offset) < (b.element.range?.lowerBound ?? 0, b.offset)
        }.map(\.element)
        if unnoted > 0 {
            notes.append(
                QueryError(
                    .note, "and \(unnoted) more onboarding id\(unnoted == 1 ? "" : "s") of the query with no events"))
        }
        return notes
    }

    /// How many onboarding ids without events ``notes(on:)`` points at one by one.
    package static let maxOnboardingNotes = 5

    /// Options of a run.
    public struct RunOptions: Sendable {
        /// The instant `now()` means; fixed for the whole run.
        public var now: Timestamp
        /// Checked every few thousand events; when set, the run throws a `.cancelled` error.
        public var cancellation: CancellationFlag?
        /// Read around damaged event blocks of a store instead of stopping at the first: the answer leaves out their
        /// events, and ``RunStatistics/notes`` says how many blocks and events were skipped and where (onboarding,
        /// screen, time range). Damage that is not a block's (LMDB's pages, the string dictionary) still stops the
        /// run. Sources other than ``StoreEventSource`` ignore it.
        public var ignoreDamaged: Bool
        /// The most threads a scan of a ``StoreEventSource`` uses (at least 1): counts by event fields and session folds
        /// (of the whole store or of whole onboardings) split the store's key ranges among them and merge what each
        /// counted or folded (docs/query-language.md, "Threads"). 1 reads on the calling thread alone. Sources other
        /// than ``StoreEventSource`` ignore it.
        public var threads: Int

        /// The processor cores this process may run on (`ProcessInfo.activeProcessorCount`): the default
        /// ``threads``.
        public static let allCores = max(1, ProcessInfo.processInfo.activeProcessorCount)

        /// Options for a run: the time `now()` means, a flag that cancels it, whether damaged blocks are read
        /// around, and how many threads its scans may use.
        public init(
            now: Timestamp = Query.wallClock(), cancellation: CancellationFlag? = nil, ignoreDamaged: Bool = false,
            threads: Int = RunOptions.allCores
        ) {
            self.now = now
            self.cancellation = cancellation
            self.ignoreDamaged = ignoreDamaged
            self.threads = max(1, threads)
        }
    }

    /// Runs the query. For an `explain` query, returns the plan as a one-column (`plan`) table.
    /// - Throws: ``QueryError`` of kind `.cancelled` or `.source`.
    /// - Complexity: proportional to the events in the key ranges the plan reads (see ``explain(on:now:)``);
    ///   memory proportional to the groups or sessions in scope.
    public func run(on source: some EventSource, options: RunOptions = RunOptions()) throws(QueryError) -> ResultTable {
        try execute(on: source, options: options).table
    }

    /// Runs the query and reports what it read.
    public func execute(on source: some EventSource, options: RunOptions = RunOptions()) throws(QueryError)
        -> (table: ResultTable, statistics: RunStatistics)
    {
        guard source is StoreEventSource else { return try executeReading(on: source, options) }
        let damaged = options.ignoreDamaged ? DamagedBlocks() : nil
        var result: Result<(table: ResultTable, statistics: RunStatistics), QueryError>!
        StoreEventSource.$threads.withValue(max(1, options.threads)) {
            StoreEventSource.$damagedBlocks.withValue(damaged) {
                do throws(QueryError) {
                    result = .success(try executeReading(on: source, options))
                } catch {
                    result = .failure(error)
                }
            }
        }
        var (table, statistics) = try result.get()
        guard let damaged else { return (table, statistics) }
        statistics.notes += DamageNotes.notes(damaged.blocks)
        return (table, statistics)
    }

    /// ``execute(on:options:)`` once the reads are set up.
    private func executeReading(on source: some EventSource, _ options: RunOptions) throws(QueryError)
        -> (table: ResultTable, statistics: RunStatistics)
    {
        var executor = Executor(query: checked, now: options.now, cancellation: options.cancellation)
        if checked.explain {
            let lines = executor.plan.describe(checked, source: source).split(separator: "\n").map {
                [Value.string(String($0))]
            }
            return (ResultTable(columns: ["plan"], rows: lines), RunStatistics())
        }
        var table = try executor.run(on: source)
        // A `select … as` after the reduction renames columns; the table stages pick columns by position.
        if table.columns.count == checked.outputColumns.count { table.columns = checked.outputColumns }
        var statistics = executor.statistics
        if !checked.answerLiterals.isEmpty, AnswerNotes.foundNothing(table) {
            statistics.notes += AnswerNotes.notes(for: checked.answerLiterals, in: text, on: source, now: options.now)
        }
        return (table, statistics)
    }

    /// The plan: how the source is read, the key ranges, the filters and the reduction.
    public func explain(on source: some EventSource, now: Timestamp = Query.wallClock()) -> String {
        Plan.make(checked, now: now).describe(checked, source: source)
    }

    /// The current time from the system's real-time clock.
    public static func wallClock() -> Timestamp {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Timestamp(microseconds: Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1_000)
    }
}
