// Queries through `boardwalk query`, in process (BoardwalkCLI.run with a buffer for stdout): a screen
// funnel over the whole store, and the same funnel on the busiest and on the median-size onboarding of 50; dwell
// by screen over the whole store and a strict funnel of the busiest onboarding (each session's events in order).
// Each run opens the store, plans, reads and renders, as the command does.
import BoardwalkCLI
import BoardwalkGenerator
import BoardwalkModel
import BoardwalkStore
import Foundation

/// A store of `sessions` generated sessions over 50 onboardings, shared by the query benchmarks.
final class QueryStore {
    let sessions: Int
    private(set) var path = ""
    private(set) var events = 0
    /// The onboarding with the most sessions: the selective query's target.
    private(set) var busiestOnboarding = ""
    /// The onboarding of median size: the generator's onboardings are very unequal (the busiest of 50 holds about
    /// a fifth of the sessions), so this is what "one onboarding of 50" usually means.
    private(set) var medianOnboarding = ""
    /// The session and profile of an event in the middle of the store, for the one-session and one-profile reads.
    private(set) var sampleSession = ""
    private(set) var sampleProfile = ""
    private var dir = ""

    init(sessions: Int) { self.sessions = sessions }

    func make() throws {
        if !path.isEmpty { return }
        dir = try scratchDirectory("query-store")
        path = dir + "/store"
        let store = try Store.open(at: path, options: Store.Options(initialMapSize: 1 << 30))
        defer { store.close() }
        var perOnboarding: [String: Int] = [:]
        var batch: [Event] = []
        batch.reserveCapacity(10_000)
        var seen = 0
        for event in generatedEvents() {
            if event.kind == .onboardingLoaded, let id = event.meta?.onboardingID { perOnboarding[id, default: 0] += 1 }
            seen += 1
            if sampleSession.isEmpty, seen >= sessions * 16, let session = event.session, let profile = event.profile {
                (sampleSession, sampleProfile) = (session, profile)
            }
            batch.append(event)
            if batch.count == 10_000 {
                events += try store.append(batch).appended
                batch.removeAll(keepingCapacity: true)
            }
        }
        events += try store.append(batch).appended
        // As `boardwalk ingest` leaves a store (and so the store DuckDB is compared with): the logs of the last
        // batches folded in.
        try store.foldLogs()
        let bySize = perOnboarding.sorted { $0.value > $1.value || ($0.value == $1.value && $0.key < $1.key) }
        busiestOnboarding = bySize.first?.key ?? ""
        medianOnboarding = bySize.isEmpty ? "" : bySize[bySize.count / 2].key
    }

    /// The generated events the store holds (before duplicates are dropped), made again on each call.
    func generatedEvents() -> some Sequence<Event> {
        SyntheticData(sessions: sessions, seed: 21, onboardings: 50).events()
    }

    // The store is removed with the rest of the scratch space when the benchmark process ends.
}

final class QueryBench: Benchmark {
    let store: QueryStore
    let query: (QueryStore) -> String
    /// `--threads N`, or nil for the command's default (every core).
    let threads: Int?
    private var text = ""
    private var rows = 0

    init(store: QueryStore, threads: Int? = nil, query: @escaping (QueryStore) -> String) {
        self.store = store
        self.threads = threads
        self.query = query
    }

    func setUp() throws {
        try store.make()
        text = query(store)
    }

    func run() throws -> UInt64 {
        let out = BufferSink()
        let err = BufferSink()
        let status = BoardwalkCLI.run(
            ["--db", store.path, "query", "--format", "json"] + (threads.map { ["--threads", "\($0)"] } ?? []) + [text],
            Invocation(environment: [:], stdout: out, stderr: err))
        if status != 0 { throw BenchError("boardwalk query exited \(status): \(err.text)") }
        rows = out.text.split(separator: "\n").count
        return UInt64(out.text.utf8.count)
    }

    func extraFigures() -> [Figure] {
        [
            Figure(name: "events in the store", value: Double(store.events), unit: ""),
            Figure(name: "sessions in the store", value: Double(store.sessions), unit: ""),
        ]
    }
}
