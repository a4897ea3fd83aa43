import BoardwalkCodec
import BoardwalkModel
import BoardwalkStore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

// Scans split by key range across threads: the parts, the read transactions of one commit, and the workers.

/// A part of a scan that one worker reads at a time: one onboarding's events (or those without a position), some
/// screens, a time range. The parts of a scan cover its ranges exactly, each event in one part.
struct ScanPart {
    /// The onboarding's id, or ``RecordFormat/noOnboarding`` for the events without a position.
    var onboarding: StringID
    /// The screens, or nil for all of them.
    var screens: ClosedRange<Int>?
    /// Microseconds since the epoch, inclusive.
    var time: ClosedRange<Int64>
    /// The events the store's list of onboardings suggests the part holds: for sizing and scheduling only.
    var estimate: Int
}

/// What parallel scans did, for tests that check the parallel path ran and left no worker running.
final class ParallelProbe: Sendable {
    struct Counts {
        /// Parallel scans run (counts and folds).
        var scans = 0
        /// Parts read, and parts skipped because the scan had stopped.
        var parts = 0
        var started = 0
        var finished = 0
        /// Of ``scans``, the session folds.
        var folds = 0
        /// Split custom funnels whose step events passed the budget (the query then read sessions as rows).
        var overBudget = 0
        /// The step events the last split custom funnel kept, all workers together.
        var stepEventsKept = 0
        /// Of ``scans``, the session deliveries split into shares, and the shares they merged.
        var deliveries = 0
        var shares = 0
    }

    private let state = Mutex(Counts())
    /// Called by each worker as it starts, on its thread (a test cancels the run from there).
    private let onStart: (@Sendable () -> Void)?

    init(onStart: (@Sendable () -> Void)? = nil) { self.onStart = onStart }

    /// What the parallel scans did so far.
    var counts: Counts { state.withLock { $0 } }

    func scanned(parts: Int) { state.withLock { $0.scans += 1 } }
    func started() {
        state.withLock { $0.started += 1 }
        onStart?()
    }

    func read() { state.withLock { $0.parts += 1 } }
    func finished() { state.withLock { $0.finished += 1 } }
    func delivered(shares: Int) {
        state.withLock {
            $0.deliveries += 1
            $0.shares += shares
        }
    }
    func folded(stepEventsKept kept: Int?, overBudget: Bool) {
        state.withLock {
            $0.folds += 1
            if let kept { $0.stepEventsKept = kept }
            if overBudget { $0.overBudget += 1 }
        }
    }
}

extension StoreEventSource {
    /// How many threads a scan may use; ``Query/RunOptions/threads`` binds it for a run. Task-local, as
    /// ``onboardingScanRatio``: workers get what they need from the thread that starts them.
    @TaskLocal static var threads = Query.RunOptions.allCores

    /// The fewest events a part of a parallel scan is cut to hold, by the store's list of onboardings; a scan whose
    /// ranges hold fewer than two such parts runs on one thread. Tests bind 1 to split small stores into many parts.
    @TaskLocal static var minimumPartEvents = 1 << 16

    /// Where parallel scans report what they did; nil (the default) outside tests.
    @TaskLocal static var parallelProbe: ParallelProbe? = nil

    /// Parts per worker a scan aims at: enough that a worker which meets slow parts is helped by the others.
    static let partsPerWorker = 3
    /// The most read transactions one parallel scan opens (the reader table holds 1 024 for every process).
    static let maxWorkers = 64
    /// The most parts one onboarding's time range is cut into.
    static let maxPartsPerOnboarding = 64

    /// The parts that cover `ranges` (their times already cut to the plan's), for `threads` workers; nil when the
    /// scan runs on one thread: one thread asked for, or fewer than two parts of ``minimumPartEvents`` in scope.
    ///
    /// A range of one onboarding is that onboarding's; the whole store is each onboarding's in the store's list,
    /// the events without a position included (a screen range across onboardings leaves them out, as the serial
    /// scan does). An onboarding with more events than a part's size is cut by time into slices of about that
    /// many events (the store's list gives its events and first and last times); the first slice starts at the
    /// range's start and the last ends at its end, so the parts cover the range whatever the list says.
    static func parts(_ snapshot: Snapshot, _ ranges: [ScanRange], threads: Int, minimum: Int) throws -> [ScanPart]? {
        guard threads > 1 else { return nil }
        let summaries = try snapshot.onboardings()
        var scope: [(range: ScanRange, summary: OnboardingSummary, estimate: Int)] = []
        for range in ranges {
            for summary in summaries {
                if let name = range.onboarding {
                    guard summary.onboardingID == name else { continue }
                } else if range.screens != ScanRange.allScreens, summary.id == nil {
                    continue
                }
                scope.append((range, summary, estimate(summary, range.time)))
                if range.onboarding != nil { break }
            }
        }
        let total = scope.reduce(0) { $0 + $1.estimate }
        let size = max(minimum, 1, total / (threads * partsPerWorker))
        guard total >= 2 * size else { return nil }
        var parts: [ScanPart] = []
        for (range, summary, estimate) in scope {
            let id = summary.id ?? RecordFormat.noOnboarding
            let screens: ClosedRange<Int>? = range.screens == ScanRange.allScreens ? nil : range.screens
            let slices = min(maxPartsPerOnboarding, max(1, estimate / size))
            let lo = range.time.lowerBound, hi = range.time.upperBound
            let first = max(lo, summary.timeRange.lowerBound.microseconds)
            let last = min(hi, summary.timeRange.upperBound.microseconds)
            var cuts: [Int64] = []
            if slices > 1, first < last {
                let span = Double(last) - Double(first)
                for i in 1..<slices {
                    let cut = first + Int64(span * Double(i) / Double(slices))
                    if cut > lo, cut <= hi, cut > (cuts.last ?? lo) { cuts.append(cut) }
                }
            }
            var from = lo
            for cut in cuts {
                parts.append(ScanPart(onboarding: id, screens: screens, time: from...(cut - 1), estimate: 0))
                from = cut
            }
            parts.append(ScanPart(onboarding: id, screens: screens, time: from...hi, estimate: 0))
            let each = estimate / (cuts.count + 1)
            for i in (parts.count - cuts.count - 1)..<parts.count { parts[i].estimate = each }
        }
        guard parts.count > 1 else { return nil }
        // The largest first: the last parts taken are small, so workers finish together.
        return parts.sorted { $0.estimate > $1.estimate }
    }

    /// The events of `summary` in `time`, supposing them spread evenly over its first to last time.
    private static func estimate(_ summary: OnboardingSummary, _ time: ClosedRange<Int64>) -> Int {
        let first = summary.timeRange.lowerBound.microseconds, last = summary.timeRange.upperBound.microseconds
        let lo = max(time.lowerBound, first), hi = min(time.upperBound, last)
        guard lo <= hi else { return 0 }
        guard first < last, lo > first || hi < last else { return summary.events }
        return Int((Double(hi) - Double(lo)) / (Double(last) - Double(first)) * Double(summary.events))
    }

    /// Runs `body` with `first` and up to `extra` more snapshots of the same commit, each its own read transaction.
    ///
    /// The transactions are opened one after the other; when a writer commits in between, they do not all read
    /// the same commit, and `body` gets `first` alone (the scan then runs on one thread) unless `retry` is true:
    /// the snapshots are then closed and `body` is not called, so the caller may begin again with a new `first`.
    /// - Returns: whether `body` ran.
    func withSnapshots(
        of first: Snapshot, extra: Int, retry: Bool, _ body: ([Snapshot]) throws -> Void
    ) throws -> Bool {
        var snapshots = [first]
        var ran = false
        func open() throws {
            guard snapshots.count > extra else {
                try reading { snapshot in
                    snapshots.append(snapshot)
                    defer { snapshots.removeLast() }
                    try open()
                }
                return
            }
            if snapshots.allSatisfy({ $0.commitID == first.commitID }) {
                ran = true
                try body(snapshots)
            } else if !retry {
                ran = true
                try body([first])
            }
        }
        try open()
        return ran
    }

    /// Runs `scan` on `snapshots.count` threads (the calling thread and threads started for the run), worker `w`
    /// reading with `snapshots[w]` into `states[w]`, each taking the next part of `parts` until none is left;
    /// returns when every worker has returned and its thread has been joined.
    ///
    /// A worker that throws stops taking parts, and so do the others once they finish the part they read; then the
    /// first error (by worker) is thrown. Cancellation is the scans' own: each checks the run's flag as it reads.
    /// - Throws: what `scan` throws.
    static func runWorkers<State, Part>(
        _ snapshots: [Snapshot], _ parts: [Part], _ states: inout [State],
        _ scan: (inout State, Snapshot, Part) throws -> Void
    ) throws {
        precondition(states.count == snapshots.count)
        let probe = parallelProbe
        probe?.scanned(parts: parts.count)
        try withoutActuallyEscaping(scan) { scan in
            try states.withUnsafeMutableBufferPointer { states in
                let run = WorkerRun(snapshots: snapshots, parts: parts, states: states, scan: scan, probe: probe)
                // Threads of their own, joined before returning (`DispatchQueue.concurrentPerform` ran both of a
                // 2-core run's iterations on the calling thread here, one after the other, at 97 % of one core).
                var threads: [pthread_t] = []
                var unstarted: [Int] = []
                for w in 1..<snapshots.count {
                    let context = Unmanaged.passRetained(WorkerContext(work: { run.work($0) }, worker: w)).toOpaque()
                    var thread = pthread_t()
                    if pthread_create(
                        &thread, nil,
                        { context in
                            let worker = Unmanaged<WorkerContext>.fromOpaque(context!).takeRetainedValue()
                            worker.work(worker.worker)
                            return nil
                        }, context) == 0
                    {
                        threads.append(thread)
                    } else {
                        // No thread to be had (a process limit): this worker's share runs on the calling thread.
                        Unmanaged<WorkerContext>.fromOpaque(context).release()
                        unstarted.append(w)
                    }
                }
                run.work(0)
                for w in unstarted { run.work(w) }
                for thread in threads { pthread_join(thread, nil) }
                if let error = run.errors.lazy.compactMap({ $0 }).first { throw error }
            }
        }
    }
}

/// What a worker thread is started with: the work and its number.
private final class WorkerContext {
    let work: (Int) -> Void
    let worker: Int

    init(work: @escaping (Int) -> Void, worker: Int) {
        self.work = work
        self.worker = worker
    }
}

/// The shared state of ``StoreEventSource/runWorkers(_:_:_:_:)``: unchecked, as each worker touches only its own
/// slot of `states` and `errors` and its own snapshot, and the rest is read-only or atomic.
private final class WorkerRun<State, Part>: @unchecked Sendable {
    let snapshots: [Snapshot]
    let parts: [Part]
    let states: UnsafeMutableBufferPointer<State>
    let scan: (inout State, Snapshot, Part) throws -> Void
    let probe: ParallelProbe?
    /// Worker `w`'s error, in its own slot (not an array property, whose writes would overlap in its exclusivity
    /// checks).
    let errors: UnsafeMutableBufferPointer<(any Error)?>
    let next = Atomic<Int>(0)
    let failed = Atomic<Bool>(false)

    init(
        snapshots: [Snapshot], parts: [Part], states: UnsafeMutableBufferPointer<State>,
        scan: @escaping (inout State, Snapshot, Part) throws -> Void, probe: ParallelProbe?
    ) {
        self.snapshots = snapshots
        self.parts = parts
        self.states = states
        self.scan = scan
        self.probe = probe
        errors = .allocate(capacity: snapshots.count)
        errors.initialize(repeating: nil)
    }

    deinit {
        errors.deinitialize()
        errors.deallocate()
    }

    func work(_ w: Int) {
        probe?.started()
        defer { probe?.finished() }
        // The state is moved to this thread's stack while it works: the states lie side by side, and counters
        // written per event into neighbouring slots would share cache lines between the threads.
        let slot = states.baseAddress! + w
        var state = slot.move()
        defer { slot.initialize(to: state) }
        while !failed.load(ordering: .relaxed) {
            let i = next.wrappingAdd(1, ordering: .relaxed).oldValue
            guard i < parts.count else { return }
            do {
                try scan(&state, snapshots[w], parts[i])
                probe?.read()
            } catch {
                errors[w] = error
                failed.store(true, ordering: .relaxed)
                return
            }
        }
    }
}

/// A session fold split across threads: the scans of the workers, each with the fold needs it reads with (a custom
/// funnel's step tests of its own, so that no two threads count into one budget).
private struct FoldWorker<Scan> {
    var scan: Scan
    let needs: FoldNeeds
}

extension StoreEventSource {
    /// Folds the events of `ranges` into `scan`'s sessions on several threads, when ``threads`` allows more than one
    /// and the store's list of onboardings says the ranges hold enough events (``parts(_:_:threads:minimum:)``);
    /// returns false, having read nothing, when the fold runs on one thread (then so does the caller).
    ///
    /// Worker 0 folds into `scan`; each further worker into a scan `make` gives; `read` folds one part into a
    /// worker's scan, and `absorb` merges a worker's scan into `scan` once all have returned. Snapshots that do not
    /// all read one commit fold on one thread.
    ///
    /// A custom funnel's step events (``FoldNeeds/stepTests``) are kept within its budget: each worker counts them in
    /// step tests of its own and adds them, after each part, to a count of the whole split; once that passes what
    /// remains of the budget, every worker stops at its next part. The step events the workers kept are then counted
    /// into `needs`' tests, over budget as one scan would be (the caller then reads sessions as rows). The step events
    /// kept stay under the budget plus one part's per worker.
    func foldSplit<Scan>(
        _ snapshot: Snapshot, _ ranges: [ScanRange], into scan: inout Scan, needs: FoldNeeds,
        make: () -> Scan, read: (inout Scan, Snapshot, ScanPart, FoldNeeds) throws -> Void,
        absorb: (inout Scan, Scan) throws -> Void
    ) throws -> Bool {
        guard
            let parts = try StoreEventSource.parts(
                snapshot, ranges, threads: StoreEventSource.threads, minimum: StoreEventSource.minimumPartEvents)
        else { return false }
        let workers = min(StoreEventSource.threads, parts.count, StoreEventSource.maxWorkers)
        var split = false
        _ = try withSnapshots(of: snapshot, extra: workers - 1, retry: false) { snapshots in
            guard snapshots.count > 1 else { return }
            split = true
            var states: [FoldWorker<Scan>] = []
            for w in snapshots.indices {
                var own = needs
                own.stepTests = needs.stepTests?.share()
                states.append(FoldWorker(scan: w == 0 ? StoreEventSource.take(&scan, make) : make(), needs: own))
            }
            // Step events kept by all workers, as each reported after its parts; past `room`, everyone stops.
            let kept = Atomic<Int>(0)
            let over = Atomic<Bool>(false)
            let room = needs.stepTests?.remaining ?? .max
            try StoreEventSource.runWorkers(snapshots, parts, &states) { state, snapshot, part in
                guard !over.load(ordering: .relaxed) else { return }
                let before = state.needs.stepTests?.kept ?? 0
                try read(&state.scan, snapshot, part, state.needs)
                guard let tests = state.needs.stepTests else { return }
                let total = kept.wrappingAdd(tests.kept - before, ordering: .relaxed).newValue
                if tests.overBudget || total > room { over.store(true, ordering: .relaxed) }
            }
            swap(&scan, &states[0].scan)
            for state in states.dropFirst() { try absorb(&scan, state.scan) }
            if let tests = needs.stepTests {
                for state in states { tests.absorb(state.needs.stepTests!) }
            }
            StoreEventSource.parallelProbe?.folded(
                stepEventsKept: needs.stepTests.map { _ in kept.load(ordering: .relaxed) },
                overBudget: needs.stepTests?.overBudget == true)
        }
        return split
    }
}
