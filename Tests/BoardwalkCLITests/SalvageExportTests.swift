import BoardwalkGenerator
import BoardwalkJSON
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

    /// Ingests a corpus in batches of 200 events, then replaces the value of the block whose key has the largest seq
    /// (one first written by a late batch, so that an export in seq order writes the batches before it) with bytes
    /// that do not decode. Returns the store's path, its events, the seqs of the damaged block and its key's seq.
    func damagedStore() throws -> (
        db: String, events: [StoredEvent], lost: Set<UInt64>, blockSeq: UInt64, group: String
    ) {
        let db = directory.appendingPathComponent("damaged.db").path
        let r = try boardwalk(
            ["ingest", "--db", db, "-q", "--batch", "200", "-"], stdin: Corpus(sessions: 60, seed: 23).text)
        #expect(r.status == 0, "\(r.stderr)")
        let store = try Store.open(at: db)
        defer { store.close() }
        let events = try store.read { try $0.events(since: 0) }
        // ingest folded the event log at its end: every block is in `events`.
        #expect(try store.env.transaction(write: false) { try $0.entries(store.dbs.eventLog) } == 0)
        var lost: Set<UInt64> = []
        var blockSeq: UInt64 = 0
        var blockKey: EventKey? = nil
        try store.env.transaction(write: true) { txn in
            try txn.withCursor(store.dbs.events) { c in
                var latest: [UInt8] = []
                var found = try c.first()
                while found {
                    let key = try #require(EventKey(c.key))
                    if latest.isEmpty || key.seq > blockSeq { (latest, blockSeq) = (Array(c.key), key.seq) }
                    found = try c.next()
                }
                let key = try #require(latest.withUnsafeBytes { EventKey($0) })
                blockKey = key
                let value = try #require(try latest.withUnsafeBytes { try txn.get(store.dbs.events, $0) })
                var block = try blockReader(key, value)
                while try advance(&block, key) { lost.insert(block.seq) }
                try latest.withUnsafeBytes { k in
                    try [UInt8]([0xFF, 0xFE, 0xFD, 0xFC, 0xFB]).withUnsafeBytes { v in
                        _ = try txn.put(store.dbs.events, k, v)
                    }
                }
            }
        }
        #expect(!lost.isEmpty && lost.count < events.count)
        // How messages name the block's group: its onboarding by its id, not by the store's number for it (then the
        // time of its first event).
        let key = try #require(blockKey)
        let onboarding = try #require(try store.read { $0.string(for: key.onboarding) })
        return (db, events, lost, blockSeq, "(onboarding \"\(onboarding)\", screen \(key.screen), events from ")
    }

    @Test("salvage writes every event outside the damaged block, lists the block, and exits with 2")
    func salvage() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let (db, events, lost, blockSeq, group) = try damagedStore()

        let plain = try boardwalk(["export", "--db", db])
        #expect(plain.status == 1, "\(plain.stderr)")
        #expect(
            plain.stderr.contains("is damaged") && plain.stderr.contains("the export is incomplete"),
            "\(plain.stderr)")
        #expect(plain.stderr.contains("'boardwalk export --salvage' goes on past damaged blocks"), "\(plain.stderr)")
        // The damaged block is named by its onboarding's id, in the export's error, a query's and check's.
        #expect(plain.stderr.contains("the block at seq \(blockSeq) \(group)"), "\(plain.stderr)")
        let query = try boardwalk(["query", "--db", db, "events | count by session"])
        #expect(query.status == 1 && query.stderr.contains("the block at seq \(blockSeq) \(group)"), "\(query.stderr)")
        let check = try boardwalk(["check", "--db", db])
        #expect(check.status == 1 && check.stderr.contains("the block at seq \(blockSeq) \(group)"), "\(check.stderr)")
        // The damage mark, which appends show, names it so too.
        let append = try boardwalk(["ingest", "--db", db, "-q", "-"], stdin: Corpus(sessions: 1, seed: 99).text)
        #expect(append.status == 1 && append.stderr.contains(group), "\(append.stderr)")
        // What it says was written is what stdout holds: every event before that seq (seqs are dense from 0), no
        // more and no fewer (the buffer it had not yet written is written before the error).
        let said = try #require(
            plain.stderr.firstRange(of: "the events before seq ").map { plain.stderr[$0.upperBound...] },
            "\(plain.stderr)")
        let written = try #require(Int(said.prefix { $0.isNumber }))
        #expect(written > 0)
        #expect(try readNDJSON(plain.stdout).count == written)
        for format in ["csv", "clickhouse"] {
            let f = try boardwalk(["export", "--db", db, "--format", format, "-o", "/dev/stdout"])
            #expect(
                f.status == 1 && f.stderr.contains("the events before seq \(written) were written"),
                "\(format): \(f.stderr)")
            #expect(f.stdout.split(separator: "\n").count == written + (format == "csv" ? 1 : 0), "\(format)")
        }
        // A batch file cut by the failure holds those events and no end block: ingest reports it as cut short instead
        // of taking it for a whole export (the end block is what tells the two apart).
        let part = directory.appendingPathComponent("part.bwk").path
        let b = try run(
            tool: "/bin/sh",
            ["-c", "\"$0\" export --db \"$1\" --format batch > \"$2\"", boardwalkExecutable.path, db, part])
        #expect(
            b.status == 1
                && b.stderr.contains("the events before seq \(written) were written (the batch file has no end block"),
            "\(b.stderr)")
        let back = try boardwalk([
            "ingest", "--db", directory.appendingPathComponent("part.db").path,
            "--rejects", directory.appendingPathComponent("part-rejects.txt").path, part,
        ])
        #expect(back.status == 1 && back.stderr.contains("ends without its end block"), "\(back.stdout)\(back.stderr)")
        // From a --since-seq, the message names where the written events begin.
        let later = try boardwalk(["export", "--db", db, "--since-seq", "100"])
        #expect(later.stderr.contains("the events from seq 100 before seq \(written) were written"), "\(later.stderr)")
        #expect(try readNDJSON(later.stdout).count == written - 100)

        let out = directory.appendingPathComponent("salvaged.ndjson").path
        let r = try boardwalk(["export", "--db", db, "--salvage", "-o", out])
        #expect(r.status == 2, "\(r.stderr)")
        // Named by its key's seq (a grown block can hold lower seqs than its key's).
        #expect(
            r.stderr.contains(
                "skipped: the rest of a block, after its first 0 events: the block at seq \(blockSeq) \(group)"),
            "\(r.stderr)")
        #expect(
            r.stderr.contains("exported \(events.count - lost.count) events (salvage, in block order)"), "\(r.stderr)")
        #expect(r.stderr.contains("skipped the rest of 1 damaged block"), "\(r.stderr)")
        let salvaged = try readNDJSON(try String(contentsOfFile: out, encoding: .utf8))
        let expected = events.filter { !lost.contains($0.seq) }.map(\.event)
        #expect(sortedLines(salvaged) == sortedLines(expected))
    }

    @Test("salvage of a sound store is the whole store, with exit 0; --since-seq and --schema are refused with it")
    func soundStoreAndUsage() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let db = directory.appendingPathComponent("sound.db").path
        #expect(
            try boardwalk(["ingest", "--db", db, "-q", "-"], stdin: Corpus(sessions: 30, seed: 5).text).status == 0)
        let whole = try boardwalk(["export", "--db", db])
        let r = try boardwalk(["export", "--db", db, "--salvage"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("nothing was skipped"), "\(r.stderr)")
        #expect(r.stdout.split(separator: "\n").sorted() == whole.stdout.split(separator: "\n").sorted())
        // A full disk: the advice is to salvage again, not to pass a --since-seq that a salvage refuses.
        let full = try boardwalk(["export", "--db", db, "--salvage", "-o", "/dev/full"])
        #expect(full.status == 1 && full.stderr.contains("run 'export --salvage' again"), "\(full.stderr)")
        #expect(!full.stderr.contains("--since-seq"), "\(full.stderr)")
        for extra in [["--since-seq", "3"], ["--format", "clickhouse", "--schema"]] {
            let u = try boardwalk(["export", "--db", db, "--salvage"] + extra)
            #expect(u.status == 64, "\(extra): \(u.stderr)")
            #expect(u.stderr.contains("--salvage"), "\(extra): \(u.stderr)")
        }
    }

    @Test("a damaged meta page: the salvage reads from the other one, says which, and exits 0 when it is the older")
    func damagedMetaPage() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let db = directory.appendingPathComponent("meta.db").path
        let corpus = Corpus(sessions: 30, seed: 5)
        #expect(try boardwalk(["ingest", "--db", db, "-q", "-"], stdin: corpus.text).status == 0)
        let whole = try boardwalk(["export", "--db", db])
        let data = try Data(contentsOf: URL(fileURLWithPath: db + "/data.mdb"))
        func transaction(_ slot: Int) -> UInt64 {
            data.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: slot * 4096 + 144, as: UInt64.self) }
        }
        let older = transaction(0) > transaction(1) ? 1 : 0
        var damaged = data
        for i in 16..<20 { damaged[older * 4096 + i] ^= 0xFF }
        try damaged.write(to: URL(fileURLWithPath: db + "/data.mdb"))

        let plain = try boardwalk(["export", "--db", db])
        #expect(plain.status == 1 && plain.stderr.contains("meta pages"), "\(plain.stderr)")
        let salvage = try boardwalk(["export", "--db", db, "--salvage"])
        #expect(salvage.status == 0, "\(salvage.stderr)")
        #expect(salvage.stderr.contains("meta page \(older)") && salvage.stderr.contains("latest commit"))
        // The same events (in block order rather than seq order).
        #expect(
            Set(salvage.stdout.split(separator: "\n")) == Set(whole.stdout.split(separator: "\n")),
            "\(salvage.stderr)")
        #expect(salvage.stdout.split(separator: "\n").count == corpus.events.count)
    }
}

extension SalvageExportTests {
    @Test("a damaged newer meta page: the salvage reads the older commit's trees and the latest commit's pages")
    func damagedNewerMetaPage() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let db = directory.appendingPathComponent("newer.db").path
        let corpus = Corpus(sessions: 30, seed: 5)
        #expect(try boardwalk(["ingest", "--db", db, "-q", "--batch", "100", "-"], stdin: corpus.text).status == 0)
        let whole = try boardwalk(["export", "--db", db])
        var data = try Data(contentsOf: URL(fileURLWithPath: db + "/data.mdb"))
        func transaction(_ slot: Int) -> UInt64 {
            data.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: slot * 4096 + 144, as: UInt64.self) }
        }
        let newer = transaction(0) > transaction(1) ? 0 : 1
        for i in 16..<20 { data[newer * 4096 + i] ^= 0xFF }
        try data.write(to: URL(fileURLWithPath: db + "/data.mdb"))

        let salvage = try boardwalk(["export", "--db", db, "--salvage"])
        #expect(salvage.status == 2, "\(salvage.stderr)")
        #expect(salvage.stderr.contains("meta page \(newer), which says it describes transaction"), "\(salvage.stderr)")
        #expect(
            salvage.stdout.split(separator: "\n").sorted() == whole.stdout.split(separator: "\n").sorted(),
            "\(salvage.stderr)")
    }

    @Test("an event the format cannot hold is skipped and listed by a salvage, where it ends a plain export")
    func formatRefusals() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let db = directory.appendingPathComponent("far.db").path
        // Two events, the second in the year 2401 (a store holds it; ClickHouse's DateTime64 does not).
        let events = [Timestamp(microseconds: 1_780_000_000_000_000), Timestamp(microseconds: 13_600_000_000_000_000)]
            .map {
                Event(
                    time: $0, session: "s1",
                    meta: Meta(onboardingID: "o", screenClientID: "welcome", screenIndex: 0, totalScreens: 3),
                    payload: .analytics(.onboardingStarted))
            }
        let ingest = try boardwalk(
            ["ingest", "--db", db, "-q", "-"], stdin: events.map { CanonicalJSON.line($0) + "\n" }.joined())
        #expect(ingest.status == 0, "\(ingest.stderr)")
        let plain = try boardwalk(["export", "--db", db, "--format", "clickhouse"])
        #expect(plain.status == 1, "\(plain.stderr)")
        let r = try boardwalk(["export", "--db", db, "--format", "clickhouse", "--salvage"])
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stdout.split(separator: "\n").count == 1, "\(r.stdout)")
        #expect(r.stderr.contains("skipped: one event (seq 1), which the format cannot hold"), "\(r.stderr)")
        #expect(r.stderr.contains("exported 1 event (salvage, in block order); skipped 1 event"), "\(r.stderr)")
    }

    /// A compacted copy of a fresh store (every page in use, the main database's leaf last), with the root page of
    /// the named database `name` marked as the other kind (a branch as a leaf, a leaf as a branch).
    func storeWithDamagedRoot(of name: String) throws -> String {
        let db = directory.appendingPathComponent("pages.db").path
        #expect(
            try boardwalk(["ingest", "--db", db, "-q", "-"], stdin: Corpus(sessions: 200, seed: 3).text).status == 0)
        let copy = directory.appendingPathComponent("damaged-\(name).db").path
        #expect(try boardwalk(["backup", "--db", db, copy]).status == 0)
        let path = copy + "/data.mdb"
        var data = try Data(contentsOf: URL(fileURLWithPath: path))
        let last = data.count / 4096 - 1
        let page = data[(last * 4096)..<((last + 1) * 4096)]
        // The record after the name: pad 4, flags 2, depth 2, then branch, leaf, overflow pages, entries, root (8 each).
        let record = try #require(page.firstRange(of: Data(name.utf8))).upperBound
        let root = (0..<8).reduce(0) { $0 | Int(data[record + 40 + $1]) << (8 * $1) }
        #expect(root > 1 && root < last)
        #expect(data[root * 4096 + 10] & 0x03 != 0)
        data[root * 4096 + 10] ^= 0x03
        try data.write(to: URL(fileURLWithPath: path))
        return copy
    }

    @Test("a damaged branch page of events: the salvage reads the leaves below it from the file and names the page")
    func pageDamage() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let events = try storeWithDamagedRoot(of: "events")
        let whole = try boardwalk(["export", "--db", directory.appendingPathComponent("pages.db").path])
        #expect(whole.status == 0, "\(whole.stderr)")
        let r = try boardwalk(["export", "--db", events, "--salvage"])
        #expect(r.status == 2, "\(r.stderr)")
        // A compacted copy has no older copies of blocks: every event, once, from the leaves below the root.
        #expect(
            r.stdout.split(separator: "\n").sorted() == whole.stdout.split(separator: "\n").sorted(), "\(r.stderr)")
        #expect(r.stderr.contains("skipped: what LMDB page "), "\(r.stderr)")
        #expect(r.stderr.contains("a branch page (and every page below it) of events"), "\(r.stderr)")
        #expect(r.stderr.contains("were read from pages the trees do not reach"), "\(r.stderr)")
        #expect(!r.stderr.contains("not read"), "\(r.stderr)")

        let batches = try storeWithDamagedRoot(of: "batches")
        #expect(try boardwalk(["check", "--db", batches]).status == 1)
        let b = try boardwalk(["export", "--db", batches, "--salvage"])
        #expect(b.status == 0, "\(b.stderr)")
        let count = try #require(Int(b.stderr.split(separator: " ")[1]))
        #expect(count == b.stdout.split(separator: "\n").count && count > 1000, "\(b.stderr)")
    }

    /// Damaged LMDB pages of `event_log` cost what was on them, not the log: the blocks below a damaged branch page
    /// are read from the leaves.
    @Test("a damaged branch page of event_log costs the salvage nothing")
    func logPageDamage() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let db = directory.appendingPathComponent("logged.db").path
        var stored = 0
        do {
            // 20 batches: the 16th folds the log into `events`, the last four stay in the log.
            let store = try Store.open(at: db, options: .init(durability: .noSync))
            defer { store.close() }
            let events = Corpus(sessions: 200, seed: 8).events
            let size = events.count / 20 + 1
            for start in stride(from: 0, to: events.count, by: size) {
                stored += try store.append(events[start..<min(start + size, events.count)]).appended
            }
            #expect(try store.read { try $0.unfoldedBatches().eventLog } == 4)
        }
        let copy = directory.appendingPathComponent("logged-copy.db").path
        #expect(try boardwalk(["backup", "--db", db, copy]).status == 0)
        let path = copy + "/data.mdb"
        var data = try Data(contentsOf: URL(fileURLWithPath: path))
        let last = data.count / 4096 - 1
        let page = data[(last * 4096)..<((last + 1) * 4096)]
        let record = try #require(page.firstRange(of: Data("event_log".utf8))).upperBound
        let root = (0..<8).reduce(0) { $0 | Int(data[record + 40 + $1]) << (8 * $1) }
        #expect(root > 1 && root < last)
        #expect(data[root * 4096 + 10] & 0x7F == 0x01, "the log's root is a branch page")
        data[root * 4096 + 10] ^= 0x03
        try data.write(to: URL(fileURLWithPath: path))

        let r = try boardwalk(["export", "--db", copy, "--salvage"])
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stdout.split(separator: "\n").count == stored, "\(r.stderr)")
        #expect(r.stderr.contains("a branch page (and every page below it) of event_log"), "\(r.stderr)")
        #expect(r.stderr.contains("skipped what 1 LMDB page held"), "\(r.stderr)")
    }

    @Test("a data file cut short: the salvage reads its pages directly, says where it ends and exits with 2")
    func truncatedFile() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let db = directory.appendingPathComponent("cut.db").path
        #expect(
            try boardwalk(["ingest", "--db", db, "-q", "-"], stdin: Corpus(sessions: 200, seed: 3).text).status == 0)
        let whole = try boardwalk(["export", "--db", db])
        let copy = directory.appendingPathComponent("cut-copy.db").path
        #expect(try boardwalk(["backup", "--db", db, copy]).status == 0)
        // A compacted copy ends with the main database's leaf: without it, the named databases are found by reading
        // every leaf page.
        let path = copy + "/data.mdb"
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        try data.prefix(data.count - 4096).write(to: URL(fileURLWithPath: path))
        let plain = try boardwalk(["export", "--db", copy])
        #expect(plain.status == 1 && plain.stderr.contains("cut short"), "\(plain.stderr)")
        let r = try boardwalk(["export", "--db", copy, "--salvage"])
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr.contains("note: \(path) does not open"), "\(r.stderr)")
        #expect(r.stderr.contains("the file was cut short: it holds pages 0…"), "\(r.stderr)")
        #expect(
            r.stdout.split(separator: "\n").sorted() == whole.stdout.split(separator: "\n").sorted(), "\(r.stderr)")
    }

    /// A backup checks LMDB's pages first: liblmdb's compacting copy crashes on a damaged page of `event_log`. Any
    /// damaged page refuses the backup with a message and leaves no copy behind.
    @Test("backup refuses a store with damaged LMDB pages instead of copying them")
    func backupOfDamagedPages() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        for name in ["events", "batches"] {
            let damaged = try storeWithDamagedRoot(of: name)
            let copy = directory.appendingPathComponent("copy-of-\(name)").path
            let r = try boardwalk(["backup", "--db", damaged, copy])
            #expect(r.status == 1, "\(name): \(r.stderr)")
            #expect(
                r.stderr.contains("LMDB's own pages of the store are damaged") && r.stderr.contains("boardwalk check"),
                "\(name): \(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: copy + "/data.mdb"), "\(name)")
        }
    }
}
