// Boardwalk's store: append with both indexes and a durable commit per batch, and a full scan through
// borrowed views.
import BoardwalkCodec
import BoardwalkModel
import BoardwalkStore
import Foundation

/// `Store.append` of the same events the peers write, `batch` per call (one write transaction and one
/// durable commit each), into a fresh store per run.
final class StoreAppendBench: Benchmark {
    let input: () -> [Event]
    let batch: Int
    let label: String
    let durability: Store.Durability
    private var events: [Event] = []
    private var store: Store?
    private var dir = ""
    private var bytesOnDisk = 0

    init(label: String, batch: Int, durability: Store.Durability = .full, input: @escaping () -> [Event]) {
        self.label = label
        self.batch = batch
        self.durability = durability
        self.input = input
    }

    func setUp() throws { events = input() }

    func prepareRun() throws {
        dir = try scratchDirectory("store-\(label)")
        // A map large enough for the run, so map growth is not what is measured (it has its own tests).
        store = try Store.open(
            at: dir + "/store", options: Store.Options(durability: durability, initialMapSize: 4 << 30))
    }

    func run() throws -> UInt64 {
        let store = store!
        var appended: UInt64 = 0
        var start = 0
        while start < events.count {
            let end = min(start + batch, events.count)
            let result = try store.append(events[start..<end])
            appended &+= UInt64(result.appended)
            start = end
        }
        if appended != UInt64(events.count) {
            throw BenchError("the store appended \(appended) of \(events.count) events")
        }
        return appended
    }

    func finishRun() throws {
        store?.close()
        store = nil
        bytesOnDisk = allocatedDiskBytes(dir)
        removeScratch(dir)
    }

    func extraFigures() -> [Figure] {
        [Figure(name: "bytes on disk per event", value: Double(bytesOnDisk) / Double(max(1, events.count)), unit: "B")]
    }

    func tearDown() throws { events = [] }
}

/// Every event of the store in key order through `forEachEvent`'s borrowed views.
final class StoreScanBench: Benchmark {
    let input: () -> [Event]
    private var store: Store?
    private var dir = ""
    private var count = 0

    init(input: @escaping () -> [Event]) { self.input = input }

    func setUp() throws {
        dir = try scratchDirectory("store-scan")
        let store = try Store.open(at: dir + "/store", options: Store.Options(initialMapSize: 4 << 30))
        let events = input()
        count = events.count
        var start = 0
        while start < events.count {
            let end = min(start + 10_000, events.count)
            _ = try store.append(events[start..<end])
            start = end
        }
        self.store = store
    }

    func run() throws -> UInt64 {
        var sum: UInt64 = 0
        var seen = 0
        try store!.read { snapshot in
            try snapshot.forEachEvent(onboarding: nil as StringID?) { view in
                seen += 1
                sum &+= UInt64(bitPattern: view.time.microseconds) &+ UInt64(view.screenIndex ?? 0)
                return true
            }
        }
        if seen != count { throw BenchError("the scan saw \(seen) of \(count) events") }
        return sum
    }

    func tearDown() throws {
        store?.close()
        store = nil
        removeScratch(dir)
    }
}
