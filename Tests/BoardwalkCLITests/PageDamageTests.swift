import BoardwalkGenerator
import Foundation
import Testing

/// `boardwalk check` on stores whose LMDB pages (not Boardwalk's values) are damaged: liblmdb trusts its branch and
/// leaf pages and asserts or crashes on some bit flips, so `check` reads the trees from the
/// file first. It runs in a child process here: a crash is an exit by signal, not a failed test runner.
@Suite("check on damaged LMDB pages")
struct PageDamageTests {
    let directory: URL
    init() throws { directory = try temporaryDirectory() }

    /// A store of a few thousand events, so that its trees have branch pages and overflow runs; compacted by a
    /// backup, so that every page is in use (a free page's damage changes nothing a reader sees).
    func makeStore() throws -> String {
        let db = directory.appendingPathComponent("ingested.db").path
        let corpus = Corpus(sessions: 400, seed: 17)
        let r = try boardwalk(["ingest", "--db", db, "-q", "-"], stdin: corpus.text)
        #expect(r.status == 0, "\(r.stderr)")
        let pristine = directory.appendingPathComponent("pristine.db").path
        #expect(try boardwalk(["backup", "--db", db, pristine]).status == 0)
        return pristine
    }

    /// The page numbers of each kind (flags at byte 10 of the page header: branch 1, leaf 2, overflow 4), pages 2…
    /// of `data`, which must be a whole number of 4 KiB pages.
    func pages(_ data: Data, flags: UInt16) -> [Int] {
        (2..<(data.count / 4096)).filter { p in
            let at = p * 4096
            let pageNumber = data[at..<(at + 8)].enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
            return pageNumber == p && (UInt16(data[at + 10]) | UInt16(data[at + 11]) << 8) & 0x7F == flags
        }
    }

    /// Copies the pristine store, lets `damage` change its data file, runs `command` (`check` by default).
    func check(_ pristine: String, _ name: String, _ damage: (inout Data) -> Void, command: [String] = ["check"]) throws
        -> Execution
    {
        let copy = directory.appendingPathComponent(name).path
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        var data = try Data(contentsOf: URL(fileURLWithPath: pristine + "/data.mdb"))
        damage(&data)
        try data.write(to: URL(fileURLWithPath: copy + "/data.mdb"))
        return try boardwalk(command + ["--db", copy])
    }

    @Test("Each kind of damaged page is reported by check, which stops before any cursor reads it")
    func targetedDamage() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let pristine = try makeStore()
        let data = try Data(contentsOf: URL(fileURLWithPath: pristine + "/data.mdb"))
        #expect(try boardwalk(["check", "--db", pristine]).status == 0)
        let branch = try #require(pages(data, flags: 0x01).first)
        // The last page of a compacted copy is the main database's leaf (the named databases' records, read at
        // open); the first leaf belongs to a named database (read by `check`).
        let leaf = try #require(pages(data, flags: 0x02).last)
        let namedLeaf = try #require(pages(data, flags: 0x02).first)
        let overflow = try #require(pages(data, flags: 0x04).first)
        func node0(_ d: Data, _ page: Int) -> Int {
            page * 4096 + Int(d[page * 4096 + 16]) | Int(d[page * 4096 + 17]) << 8
        }
        let cases: [(String, String, (inout Data) -> Void)] = [
            (
                "branch child outside the file", "outside pages",
                { d in
                    let at = node0(d, branch)
                    d[at] = 0xFF; d[at + 1] = 0xFF; d[at + 2] = 0xFF; d[at + 3] = 0x7F
                }
            ),
            ("leaf page marked as a branch", "not a leaf", { d in d[leaf * 4096 + 10] = 0x01 }),
            ("a named database's leaf marked as a branch", "not a leaf", { d in d[namedLeaf * 4096 + 10] = 0x01 }),
            (
                "a named database's leaf node beyond its page", "outside the page's nodes",
                { d in d[namedLeaf * 4096 + 17] = 0xFF }
            ),
            (
                "leaf page with impossible bounds", "free space",
                { d in
                    d[leaf * 4096 + 14] = 0x01; d[leaf * 4096 + 15] = 0
                }
            ),
            ("leaf node beyond its page", "outside the page's nodes", { d in d[leaf * 4096 + 17] = 0xFF }),
            ("overflow page with another number", "says it is page", { d in d[overflow * 4096 + 4] ^= 0x01 }),
            ("overflow run longer than the file", "run of", { d in d[overflow * 4096 + 15] = 0x7F }),
        ]
        for (i, (what, expected, damage)) in cases.enumerated() {
            let r = try check(pristine, "case\(i).db", damage)
            #expect(r.status == 1, "\(what): exit \(r.status)\n\(r.stderr)")
            let said = r.stdout + r.stderr
            #expect(said.contains("LMDB") && said.contains(expected), "\(what):\n\(said)")
        }
    }

    @Test("Random bit flips in branch and leaf pages: check reports or passes, never crashes")
    func randomFlips() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let pristine = try makeStore()
        let data = try Data(contentsOf: URL(fileURLWithPath: pristine + "/data.mdb"))
        let tree = pages(data, flags: 0x01) + pages(data, flags: 0x02)
        var rng = SplitMix64(seed: 0xF11B)
        var reported = 0
        for i in 0..<24 {
            let r = try check(pristine, "flip\(i).db") { d in
                for _ in 0..<Int.random(in: 1...6, using: &rng) {
                    let page = tree[Int.random(in: 0..<tree.count, using: &rng)]
                    d[page * 4096 + Int.random(in: 8..<4096, using: &rng)] ^=
                        UInt8(1) << UInt8.random(in: 0..<8, using: &rng)
                }
            }
            #expect(r.status == 0 || r.status == 1, "flip \(i): exit \(r.status)\n\(r.stderr.prefix(600))")
            if r.status == 1 { reported += 1 }
        }
        // Flips in keys and values are Boardwalk's own checks' to find, flips in page structure the page walk's;
        // either way some of these copies must be reported.
        #expect(reported > 0)
    }

    @Test("A database record's flags and a meta page's last page number: reported at open, never a trap or a hang")
    func damagedRecords() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let pristine = try makeStore()
        let data = try Data(contentsOf: URL(fileURLWithPath: pristine + "/data.mdb"))
        // The main database's leaf (the last page of a compacted copy) holds each named database's 48-byte record
        // after its name: flags at byte 4 of the record. MDB_INTEGERKEY on `events` made queries spin forever.
        let last = data.count / 4096 - 1
        let page = data[(last * 4096)..<((last + 1) * 4096)]
        let name = try #require(page.firstRange(of: Data("events".utf8)))
        // The meta page LMDB uses is the one with the larger transaction id (byte 144 of each).
        func txn(_ meta: Int) -> UInt64 {
            data[(meta * 4096 + 144)..<(meta * 4096 + 152)].enumerated().reduce(0) {
                $0 | UInt64($1.element) << (8 * $1.offset)
            }
        }
        let meta = txn(0) > txn(1) ? 0 : 1
        let cases: [(String, String, (inout Data) -> Void)] = [
            ("MDB_INTEGERKEY set on events", "flags 0x8", { d in d[name.upperBound + 4] ^= 0x08 }),
            ("MDB_REVERSEKEY set on events", "flags 0x2", { d in d[name.upperBound + 4] ^= 0x02 }),
            ("a last page near 2^64", "cut short", { d in for i in 0..<8 { d[meta * 4096 + 136 + i] = 0xFF } }),
            (
                "a last page of 2^52", "cut short",
                { d in for i in 0..<8 { d[meta * 4096 + 136 + i] = i < 6 ? 0xFF : (i == 6 ? 0x0F : 0) } }
            ),
        ]
        for (i, (what, expected, damage)) in cases.enumerated() {
            for command in [["check"], ["query", "events | count by kind"]] {
                let r = try check(pristine, "record\(i)-\(command[0]).db", damage, command: command)
                let said = r.stdout + r.stderr
                #expect(r.status == 1, "\(what), \(command[0]): exit \(r.status)\n\(said.prefix(600))")
                #expect(said.contains(expected), "\(what), \(command[0]):\n\(said.prefix(600))")
            }
        }
    }
}
