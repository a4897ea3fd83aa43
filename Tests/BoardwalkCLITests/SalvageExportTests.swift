import BoardwalkGenerator
import BoardwalkModel
import Foundation
import Testing

@testable import BoardwalkStore

/// `boardwalk export --salvage` on a store with a damaged block: the plain export stops there, the salvage writes
/// every other event and says what it skipped.
@Suite("export --salvage")
struct SalvageExportTests {
    let directory: URL
    init() throws { directory = try temporaryDirectory() }

    /// Ingests a corpus, then replaces the value of the first block in key order with bytes that do not decode.
    /// Returns the store's path, its events, and the seqs of the damaged block.
    func damagedStore() throws -> (db: String, events: [StoredEvent], lost: Set<UInt64>) {
        let db = directory.appendingPathComponent("damaged.db").path
        let r = try boardwalk(["ingest", "--db", db, "-q", "-"], stdin: Corpus(sessions: 60, seed: 23).text)
        #expect(r.status == 0, "\(r.stderr)")
        let store = try Store.open(at: db)
        defer { store.close() }
        let events = try store.read { try $0.events(since: 0) }
        var lost: Set<UInt64> = []
        try store.env.transaction(write: true) { txn in
            try txn.withCursor(store.dbs.events) { c in
                #expect(try c.first())
                let key = try #require(EventKey(c.key))
                var block = try blockReader(key, c.value)
                while try advance(&block, key) { lost.insert(block.seq) }
                let keyBytes = Array(c.key)
                try keyBytes.withUnsafeBytes { k in
                    try [UInt8]([0xFF, 0xFE, 0xFD, 0xFC, 0xFB]).withUnsafeBytes { v in _ = try txn.put(store.dbs.events, k, v) }
                }
            }
        }
        #expect(!lost.isEmpty && lost.count < events.count)
        return (db, events, lost)
    }

    @Test("salvage writes every event outside the damaged block, lists the block, and exits with 2")
    func salvage() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let (db, events, lost) = try damagedStore()

        let plain = try boardwalk(["export", "--db", db])
        #expect(plain.status == 1, "\(plain.stderr)")
        #expect(plain.stderr.contains("does not decode") && plain.stderr.contains("the export is incomplete"), "\(plain.stderr)")

        let out = directory.appendingPathComponent("salvaged.ndjson").path
        let r = try boardwalk(["export", "--db", db, "--salvage", "-o", out])
        #expect(r.status == 2, "\(r.stderr)")
        let firstLost = try #require(lost.min())
        #expect(r.stderr.contains("skipped: skipped the rest of a block after 0 events: the block at seq \(firstLost)"), "\(r.stderr)")
        #expect(r.stderr.contains("exported \(events.count - lost.count) events (salvage, in block order)"), "\(r.stderr)")
        #expect(r.stderr.contains("skipped the rest of 1 damaged block"), "\(r.stderr)")
        let salvaged = try readNDJSON(try String(contentsOfFile: out, encoding: .utf8))
        let expected = events.filter { !lost.contains($0.seq) }.map(\.event)
        #expect(sortedLines(salvaged) == sortedLines(expected))
    }

    @Test("salvage of a sound store is the whole store, with exit 0; --since-seq and --schema are refused with it")
    func soundStoreAndUsage() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let db = directory.appendingPathComponent("sound.db").path
        #expect(try boardwalk(["ingest", "--db", db, "-q", "-"], stdin: Corpus(sessions: 30, seed: 5).text).status == 0)
        let whole = try boardwalk(["export", "--db", db])
        let r = try boardwalk(["export", "--db", db, "--salvage"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("nothing was skipped"), "\(r.stderr)")
        #expect(r.stdout.split(separator: "\n").sorted() == whole.stdout.split(separator: "\n").sorted())
        for extra in [["--since-seq", "3"], ["--format", "clickhouse", "--schema"]] {
            let u = try boardwalk(["export", "--db", db, "--salvage"] + extra)
            #expect(u.status == 64, "\(extra): \(u.stderr)")
            #expect(u.stderr.contains("--salvage"), "\(extra): \(u.stderr)")
        }
    }
}
