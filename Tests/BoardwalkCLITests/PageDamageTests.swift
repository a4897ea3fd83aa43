import BoardwalkGenerator
import Foundation
import Testing

/// `boardwalk check` on stores whose LMDB pages (not Boardwalk's values) are damaged: liblmdb trusts its branch and
/// leaf pages and asserted or crashed on some bit flips (QA, sessions 6 and 7), so `check` reads the trees from the
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

    /// Copies the pristine store, lets `damage` change its data file, runs `check`.
    func check(_ pristine: String, _ name: String, _ damage: (inout Data) -> Void) throws -> Execution {
        let copy = directory.appendingPathComponent(name).path
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        var data = try Data(contentsOf: URL(fileURLWithPath: pristine + "/data.mdb"))
        damage(&data)
        try data.write(to: URL(fileURLWithPath: copy + "/data.mdb"))
        return try boardwalk(["check", "--db", copy])
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
        func node0(_ d: Data, _ page: Int) -> Int { page * 4096 + Int(d[page * 4096 + 16]) | Int(d[page * 4096 + 17]) << 8 }
        let cases: [(String, String, (inout Data) -> Void)] = [
            ("branch child outside the file", "outside pages", { d in
                let at = node0(d, branch)
                d[at] = 0xFF; d[at + 1] = 0xFF; d[at + 2] = 0xFF; d[at + 3] = 0x7F
            }),
            ("leaf page marked as a branch", "not a leaf", { d in d[leaf * 4096 + 10] = 0x01 }),
            ("a named database's leaf marked as a branch", "not a leaf", { d in d[namedLeaf * 4096 + 10] = 0x01 }),
            ("a named database's leaf node beyond its page", "outside the page's nodes", { d in d[namedLeaf * 4096 + 17] = 0xFF }),
            ("leaf page with impossible bounds", "free space", { d in d[leaf * 4096 + 14] = 0x01; d[leaf * 4096 + 15] = 0 }),
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
                    d[page * 4096 + Int.random(in: 8..<4096, using: &rng)] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &rng)
                }
            }
            #expect(r.status == 0 || r.status == 1, "flip \(i): exit \(r.status)\n\(r.stderr.prefix(600))")
            if r.status == 1 { reported += 1 }
        }
        // Flips in keys and values are Boardwalk's own checks' to find, flips in page structure the page walk's;
        // either way some of these copies must be reported.
        #expect(reported > 0)
    }
}
