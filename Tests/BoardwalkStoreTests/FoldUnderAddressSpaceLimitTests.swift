import BoardwalkModel
import Foundation
import Testing

@testable import BoardwalkStore

/// Under an address-space limit (`ulimit -v`) the event log is folded a few of its oldest batches per transaction
/// (LMDB keeps every page a transaction writes in memory until the commit); with no room for even one batch the
/// append is refused with a message naming the limit, and nothing stored is lost.
@Suite struct FoldUnderAddressSpaceLimitTests {
    /// Batch `n` of 150 events over three onboardings and five screens, in time order across batches.
    static func batch(_ n: Int) -> [Event] {
        (0..<150).map { i in
            let k = n * 150 + i
            return simpleEvent(
                onboarding: k % 3, screen: k % 5, session: k % 41, time: 1_000_000 * Int64(k), eventID: "e\(k)")
        }
    }

    @Test func aTightLimitFoldsTheOldestBatchesAFewAtATime() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        // Room for about two batches' fold.
        var logAfterFolds: [Int] = []
        try WriterState.$addressSpaceRoomOverride.withValue(60_000) {
            for n in 0..<40 {
                try store.append(Self.batch(n))
                let logged = try store.env.transaction(write: false) { try EventLog.batches($0, store.dbs).count }
                logAfterFolds.append(logged)
            }
        }
        // The 16th batch fills the log and its fold takes the oldest few (four here), never all: from then on the
        // log stays near its limit, each append that fills it folding a few more.
        #expect(logAfterFolds.prefix(15) == ArraySlice(1...15), "\(logAfterFolds)")
        #expect(logAfterFolds.suffix(25).allSatisfy { $0 >= 12 && $0 <= 15 }, "\(logAfterFolds)")
        #expect(logAfterFolds.suffix(25).contains(12), "\(logAfterFolds)")
        #expect(try store.check().isOK)
        let expected = (0..<40).flatMap(Self.batch).map(Store.normalized)
        #expect(try store.read { try $0.events(since: 0).map(\.event) } == expected)
        // foldLogs under the limit: several transactions, the log empty at the end.
        try WriterState.$addressSpaceRoomOverride.withValue(60_000) { try store.foldLogs() }
        #expect(try store.env.transaction(write: false) { try $0.entries(store.dbs.eventLog) } == 0)
        #expect(try store.check().isOK)
        #expect(try store.read { try $0.events(since: 0).map(\.event) } == expected)
    }

    @Test func noRoomForOneBatchRefusesTheAppendAndARetryStoresIt() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        for n in 0..<15 { try store.append(Self.batch(n)) }
        // The 16th batch fills the log; its fold finds no room.
        let error = #expect(throws: StoreError.self) {
            try WriterState.$addressSpaceRoomOverride.withValue(0) { try store.append(Self.batch(15)) }
        }
        #expect(error?.kind == .system)
        #expect(error?.errno == .noMemory)
        #expect(error?.message.contains("ulimit -v") == true, "\(error?.message ?? "")")
        #expect(try store.read { try $0.stats().events } == 15 * 150)
        #expect(try store.check().isOK)
        // A retry with room stores the batch and folds the log.
        try store.append(Self.batch(15))
        #expect(try store.env.transaction(write: false) { try $0.entries(store.dbs.eventLog) } == 0)
        #expect(try store.check().isOK)
        #expect(
            try store.read { try $0.events(since: 0).map(\.event) }
                == (0..<16).flatMap(Self.batch).map(Store.normalized))
    }
}
