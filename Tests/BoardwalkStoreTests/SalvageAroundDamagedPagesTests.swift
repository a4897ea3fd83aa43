import BoardwalkCodec
import BoardwalkGenerator
import BoardwalkModel
import BoardwalkStoreFormat
import Foundation
import Testing

@testable import BoardwalkStore

/// A salvage reads around damaged LMDB pages and up to a truncation: every event that is not on a damaged page (its
/// block's leaf or overflow pages, or a strings chunk it names) comes out once and unchanged, whatever kind of page
/// was damaged. The expected events are worked out from the undamaged store and a map of its pages made here, apart
/// from the salvage's own reader.
@Suite struct SalvageAroundDamagedPagesTests {
    /// A generated store of several thousand events in 20 appends (the last four stay in the event log), and a
    /// compacted copy of it, where every page is in use.
    struct Fixture {
        let dir: String
        /// The store as appended (its freed pages hold older copies of blocks) and its compacted copy.
        let store: String
        let compacted: String
        /// Every event of the store, by seq.
        let events: [UInt64: Event]

        init() throws {
            dir = temporaryDirectory()
            store = dir + "/store"
            compacted = dir + "/compacted"
            var generated: [Event] = []
            var it = SyntheticData(sessions: 300, seed: 29).events()
            while let event = it.next() { generated.append(event) }
            var options = Store.Options(durability: .noSync)
            options.initialMapSize = 64 << 20
            let s = try Store.open(at: store, options: options)
            let size = generated.count / 20 + 1
            for start in stride(from: 0, to: generated.count, by: size) {
                try s.append(generated[start..<min(start + size, generated.count)])
            }
            #expect(try s.read { try $0.unfoldedBatches().eventLog } == 4)
            events = Dictionary(uniqueKeysWithValues: try s.read { try $0.events(since: 0) }.map { ($0.seq, $0.event) })
            try s.backup(to: compacted)
            s.close()
        }
    }

    /// Where each block and each strings chunk of a data file lies, from its trees (read from the newer meta page).
    struct PageMap {
        var pages = 0
        /// Per tree: branch pages, leaf pages.
        var branches: [String: [Int]] = [:]
        var leaves: [String: [Int]] = [:]
        /// The pages of each block (its leaf and its overflow run), by tree and key.
        var blocks: [(tree: String, key: [UInt8], pages: Set<Int>)] = []
        /// The pages of each strings chunk, by its first id.
        var chunks: [(first: UInt32, pages: Set<Int>)] = []
        /// The first pages of overflow runs of `events`, and every page of them.
        var overflowRuns: [Range<Int>] = []

        init(_ data: Data) throws {
            pages = data.count / 4096
            func u64(_ at: Int) -> UInt64 {
                data.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: at, as: UInt64.self) }
            }
            func u16(_ at: Int) -> Int {
                Int(data.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: at, as: UInt16.self) })
            }
            var branches: [String: [Int]] = [:]
            var leaves: [String: [Int]] = [:]
            var runs: [Range<Int>] = []
            /// Walks a tree, calling `entry` with each key, its inline value (empty when on overflow pages) and pages.
            func walk(
                _ tree: String, root: UInt64, depth: Int,
                _ entry: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, Set<Int>) throws -> Void
            ) throws {
                func visit(_ page: Int, _ level: Int) throws {
                    let bytes = data.subdata(in: (page * 4096)..<((page + 1) * 4096))
                    var children: [Int] = []
                    try bytes.withUnsafeBytes { raw in
                        let view = try LMDBPage(raw, number: UInt64(page), isLeaf: level == depth)
                        for i in 0..<view.count {
                            let node = try view.node(i)
                            if level < depth {
                                children.append(Int(node.child))
                            } else if node.flags == LMDBPage.bigData {
                                let first = Int(try view.overflowPage(node, i))
                                let count = Int(
                                    data.withUnsafeBytes {
                                        $0.loadUnaligned(fromByteOffset: first * 4096 + 12, as: UInt32.self)
                                    })
                                if tree == Layout.events { runs.append(first..<(first + count)) }
                                let empty = UnsafeRawBufferPointer(start: nil, count: 0)
                                try entry(node.key, empty, Set([page] + Array(first..<(first + count))))
                            } else {
                                try entry(node.key, try view.inlineData(node, i), [page])
                            }
                        }
                    }
                    if level < depth {
                        branches[tree, default: []].append(page)
                    } else {
                        leaves[tree, default: []].append(page)
                    }
                    for child in children { try visit(child, level + 1) }
                }
                try visit(Int(root), 1)
            }
            let meta = u64(144) > u64(4096 + 144) ? 0 : 4096
            var named: [String: (root: UInt64, depth: Int)] = [:]
            try walk("main", root: u64(meta + 128), depth: u16(meta + 94)) { key, value, _ in
                if value.count == 48 {
                    named[String(decoding: key, as: UTF8.self)] = (
                        value.loadUnaligned(fromByteOffset: 40, as: UInt64.self),
                        Int(value.loadUnaligned(fromByteOffset: 6, as: UInt16.self))
                    )
                }
            }
            var blocks: [(tree: String, key: [UInt8], pages: Set<Int>)] = []
            var chunks: [(first: UInt32, pages: Set<Int>)] = []
            for tree in [Layout.events, Layout.eventLog, Layout.strings] {
                guard let record = named[tree], record.root != .max else { continue }
                try walk(tree, root: record.root, depth: record.depth) { key, _, pages in
                    if tree == Layout.strings {
                        chunks.append((key.be32(0), pages))
                    } else {
                        blocks.append((tree, Array(key), pages))
                    }
                }
            }
            self.branches = branches
            self.leaves = leaves
            self.blocks = blocks
            self.chunks = chunks
            overflowRuns = runs
        }
    }

    /// The events of the store at `path` that a salvage must save when `lost` pages are damaged or gone: those whose
    /// block has no page among them and whose strings are all in chunks with none.
    static func expected(_ path: String, map: PageMap, lost: Set<Int>) throws -> Set<UInt64> {
        let store = try Store.open(at: path, options: Store.Options(readOnly: true))
        defer { store.close() }
        return try store.read { s in
            var strings: [String?] = (0..<s.stringCount).map { s.string(for: $0) }
            let firsts = map.chunks.map(\.first).sorted()
            for chunk in map.chunks where !chunk.pages.isDisjoint(with: lost) {
                let end = firsts.first { $0 > chunk.first } ?? s.stringCount
                for id in chunk.first..<end { strings[Int(id)] = nil }
            }
            let resolver = SparseStrings(table: strings)
            var saved: Set<UInt64> = []
            for block in map.blocks where block.pages.isDisjoint(with: lost) {
                let db = block.tree == Layout.events ? s.dbs.events : s.dbs.eventLog
                let value = try #require(try block.key.withUnsafeBytes { try s.txn.get(db, $0) })
                let key = try #require(
                    block.key.withUnsafeBytes { block.tree == Layout.events ? EventKey($0) : EventKey.logKey($0)?.key })
                var reader = try blockReader(key, value)
                while try advance(&reader, key) {
                    let record = try recordView(key, reader)
                    if (try? record.event(strings: resolver)) != nil { saved.insert(reader.seq) }
                }
            }
            return saved
        }
    }

    struct SparseStrings: StringResolver {
        var table: [String?]
        func string(for id: StringID) -> String? { Int(id) < table.count ? table[Int(id)] : nil }
    }

    /// What a salvage of the store at `path` hands out, as `boardwalk export --salvage` reads it: through liblmdb from
    /// the store or the other meta page when it opens, from its pages when it does not.
    static func salvage(_ path: String) throws -> (
        events: [StoredEvent], damage: [SalvageDamage], summary: SalvageSummary
    ) {
        var events: [StoredEvent] = []
        var damage: [SalvageDamage] = []
        let body: (StoredEvent) -> Bool = {
            events.append($0)
            return true
        }
        let damaged: (SalvageDamage) -> Bool = {
            damage.append($0)
            return true
        }
        let scratch = temporaryDirectory()
        defer { removeDirectory(scratch) }
        let summary: SalvageSummary
        do {
            let (store, _, older) = try Store.openForSalvage(at: path, scratch: scratch + "/copy")
            if older {
                // The copy would read the commit before the latest: the pages hold the latest one's too.
                store.close()
                summary = try Store.salvageEvents(inDataFileOf: path, body, damaged: damaged)
            } else {
                defer { store.close() }
                summary = try store.salvageEvents(body, damaged: damaged)
            }
        } catch let error as StoreError where error.kind == .corrupt || error.kind == .notAStore {
            summary = try Store.salvageEvents(inDataFileOf: path, body, damaged: damaged)
        }
        return (events, damage, summary)
    }

    /// Copies the store at `from`, lets `damage` change its data file, salvages the copy and checks what it saved:
    /// every event of `expected`, each once and unchanged, and (`exactly`) nothing else. Returns the salvage.
    @discardableResult
    static func check(
        _ fixture: Fixture, from: String, _ name: String, expected: Set<UInt64>, exactly: Bool = true,
        _ damage: (inout Data) -> Void
    ) throws -> (events: [StoredEvent], damage: [SalvageDamage], summary: SalvageSummary) {
        let copy = fixture.dir + "/" + name
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        var data = try Data(contentsOf: URL(fileURLWithPath: from + "/data.mdb"))
        damage(&data)
        try data.write(to: URL(fileURLWithPath: copy + "/data.mdb"))
        let result = try salvage(copy)
        let seqs = result.events.map(\.seq)
        #expect(Set(seqs).count == seqs.count, "\(name): an event came out twice")
        for stored in result.events {
            #expect(fixture.events[stored.seq] == stored.event, "\(name): seq \(stored.seq) came out changed")
        }
        let missing = expected.subtracting(seqs)
        #expect(missing.isEmpty, "\(name): \(missing.count) events not on a damaged page were not saved")
        if exactly {
            #expect(Set(seqs) == expected, "\(name): saved \(seqs.count), expected \(expected.count)")
        }
        return result
    }

    static func zero(_ page: Int) -> (inout Data) -> Void {
        { data in data.replaceSubrange((page * 4096)..<((page + 1) * 4096), with: Data(count: 4096)) }
    }

    @Test func aZeroedLeafPageOfEventsCostsTheBlocksOnIt() throws {
        let fixture = try Fixture()
        defer { removeDirectory(fixture.dir) }
        let data = try Data(contentsOf: URL(fileURLWithPath: fixture.compacted + "/data.mdb"))
        let map = try PageMap(data)
        let leaves = try #require(map.leaves[Layout.events])
        #expect(leaves.count >= 3)
        let page = leaves[leaves.count / 2]
        let expected = try Self.expected(fixture.compacted, map: map, lost: [page])
        #expect(expected.count < fixture.events.count)
        let result = try Self.check(fixture, from: fixture.compacted, "leaf", expected: expected, Self.zero(page))
        // Named in the report: the page, its kind and the blocks it held.
        let reported = result.damage.filter {
            if case .page(Layout.events, UInt64(page), false, _) = $0.extent { return true }
            return false
        }
        #expect(reported.count == 1 && reported[0].error.message.contains("a leaf page of events"))
        #expect(reported.first?.error.message.contains("held the blocks from the block at seq") == true)
        #expect(result.summary.readFromPages && result.summary.storedEvents == UInt64(fixture.events.count))
    }

    @Test func aZeroedOverflowPageCostsItsBlock() throws {
        let fixture = try Fixture()
        defer { removeDirectory(fixture.dir) }
        let data = try Data(contentsOf: URL(fileURLWithPath: fixture.compacted + "/data.mdb"))
        let map = try PageMap(data)
        let runs = map.overflowRuns.filter { $0.count >= 2 }
        #expect(runs.count >= 2)
        // The run's first page (its header gone) and a later page of another run (its block fails its checksum).
        for (name, page) in [("overflow-first", runs[0].lowerBound), ("overflow-second", runs[1].lowerBound + 1)] {
            let expected = try Self.expected(fixture.compacted, map: map, lost: [page])
            #expect(fixture.events.count - expected.count > 0, "\(name)")
            try Self.check(fixture, from: fixture.compacted, name, expected: expected, Self.zero(page))
        }
    }

    @Test func aZeroedBranchPageCostsNothing() throws {
        let fixture = try Fixture()
        defer { removeDirectory(fixture.dir) }
        let data = try Data(contentsOf: URL(fileURLWithPath: fixture.compacted + "/data.mdb"))
        let map = try PageMap(data)
        let branch = try #require(map.branches[Layout.events]?.first)
        let result = try Self.check(
            fixture, from: fixture.compacted, "branch", expected: Set(fixture.events.keys), Self.zero(branch))
        #expect(result.summary.recoveredBlocks > 0 && result.summary.recoveredEvents > 0)
        let reported = try #require(result.damage.first { if case .page = $0.extent { true } else { false } })
        #expect(reported.error.message.contains("a branch page"), "\(reported)")
        if case .page(_, _, _, let recovered) = reported.extent { #expect(recovered > 0) }
    }

    @Test func aZeroedBranchPageOfAStoreWithFreedPagesSavesEachEventOnce() throws {
        // Freed pages hold older copies of blocks: each event must still come out once and as stored.
        let fixture = try Fixture()
        defer { removeDirectory(fixture.dir) }
        let data = try Data(contentsOf: URL(fileURLWithPath: fixture.store + "/data.mdb"))
        let map = try PageMap(data)
        let branch = try #require(map.branches[Layout.events]?.first)
        try Self.check(
            fixture, from: fixture.store, "uncompacted-branch", expected: Set(fixture.events.keys), Self.zero(branch))
        let leaf = try #require(map.leaves[Layout.events]?.first)
        let expected = try Self.expected(fixture.store, map: map, lost: [leaf])
        // Older copies of the lost blocks may give back some of their events: at least the expected ones.
        try Self.check(
            fixture, from: fixture.store, "uncompacted-leaf", expected: expected, exactly: false, Self.zero(leaf))
    }

    @Test func aZeroedPageOfTheEventLogCostsItsBlocks() throws {
        let fixture = try Fixture()
        defer { removeDirectory(fixture.dir) }
        let data = try Data(contentsOf: URL(fileURLWithPath: fixture.compacted + "/data.mdb"))
        let map = try PageMap(data)
        let leaf = try #require(map.leaves[Layout.eventLog]?.first)
        let expected = try Self.expected(fixture.compacted, map: map, lost: [leaf])
        try Self.check(fixture, from: fixture.compacted, "log-leaf", expected: expected, Self.zero(leaf))
    }

    @Test func aDamagedStringsPageCostsTheEventsNamingItsStrings() throws {
        let fixture = try Fixture()
        defer { removeDirectory(fixture.dir) }
        let data = try Data(contentsOf: URL(fileURLWithPath: fixture.compacted + "/data.mdb"))
        let map = try PageMap(data)
        let leaves = try #require(map.leaves[Layout.strings])
        let page = leaves[leaves.count / 2]
        let expected = try Self.expected(fixture.compacted, map: map, lost: [page])
        #expect(expected.count < fixture.events.count)
        let result = try Self.check(fixture, from: fixture.compacted, "strings", expected: expected) { d in
            d[page * 4096 + 10] ^= 0x03  // a leaf marked as a branch
        }
        #expect(result.damage.contains { if case .event = $0.extent { true } else { false } })
    }

    @Test func aFileCutShortGivesEveryBlockStillInIt() throws {
        let fixture = try Fixture()
        defer { removeDirectory(fixture.dir) }
        for from in [fixture.compacted, fixture.store] {
            let data = try Data(contentsOf: URL(fileURLWithPath: from + "/data.mdb"))
            let map = try PageMap(data)
            // A compacted copy ends with the strings (a cut there costs the events naming those cut off), then the
            // main database's leaf (without it, every leaf is found by scanning); the appended store's pages mix.
            let strings = try #require(map.leaves[Layout.strings]?.sorted())
            let cuts =
                from == fixture.compacted
                ? [strings[strings.count / 2], map.pages - 1] : [map.pages / 3, 2 * map.pages / 3, map.pages - 1]
            for cut in cuts {
                let lost = Set(cut..<map.pages)
                let expected = try Self.expected(from, map: map, lost: lost)
                let name = "cut-\(from == fixture.store ? "store" : "compacted")-\(cut)"
                let result = try Self.check(
                    fixture, from: from, name, expected: expected, exactly: from == fixture.compacted
                ) { d in d.removeSubrange((cut * 4096)...) }
                #expect(result.summary.readFromPages, "\(name)")
                #expect(result.summary.note?.contains("does not open") == true, "\(name)")
            }
        }
    }

    @Test func eitherMetaPageDamagedCostsNothing() throws {
        let fixture = try Fixture()
        defer { removeDirectory(fixture.dir) }
        let data = try Data(contentsOf: URL(fileURLWithPath: fixture.store + "/data.mdb"))
        func transaction(_ slot: Int) -> UInt64 {
            data.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: slot * 4096 + 144, as: UInt64.self) }
        }
        let newest = transaction(0) > transaction(1) ? 0 : 1
        for (name, slot) in [("older-meta", 1 - newest), ("newer-meta", newest)] {
            let result = try Self.check(fixture, from: fixture.store, name, expected: Set(fixture.events.keys)) { d in
                for i in 16..<20 { d[slot * 4096 + i] ^= 0xFF }  // LMDB's magic
            }
            if slot == newest {
                // Read from the older commit's trees, and the latest commit's blocks from the pages they do not reach.
                #expect(result.summary.recoveredEvents > 0, "\(name)")
                #expect(result.summary.note?.contains("is damaged; what later commits wrote") == true, "\(name)")
            }
        }
    }

    @Test func bothMetaPagesDamagedLeaveTheLeavesToScan() throws {
        let fixture = try Fixture()
        defer { removeDirectory(fixture.dir) }
        let result = try Self.check(
            fixture, from: fixture.compacted, "no-meta", expected: Set(fixture.events.keys)
        ) { d in
            for slot in 0..<2 { d[slot * 4096 + 16] ^= 0xFF }
        }
        #expect(result.summary.note?.contains("neither meta page") == true)
    }

    @Test func randomDamageToTreePagesNeverChangesAnEvent() throws {
        let fixture = try Fixture()
        defer { removeDirectory(fixture.dir) }
        let data = try Data(contentsOf: URL(fileURLWithPath: fixture.compacted + "/data.mdb"))
        let map = try PageMap(data)
        // In a fixed order (a dictionary's differs between runs), so that the seed picks the same pages.
        let tree =
            map.branches.keys.sorted().flatMap { map.branches[$0]! }
            + map.leaves.keys.sorted().flatMap {
                map.leaves[$0]!
            }
        var rng = SplitMix64(seed: 0x5A17)
        for trial in 0..<12 {
            let page = tree[Int.random(in: 0..<tree.count, using: &rng)]
            let at = page * 4096 + Int.random(in: 8..<4096, using: &rng)
            let bit = UInt8(1) << UInt8.random(in: 0..<8, using: &rng)
            let expected = try Self.expected(fixture.compacted, map: map, lost: [page])
            try Self.check(fixture, from: fixture.compacted, "flip\(trial)", expected: expected, exactly: false) { d in
                d[at] ^= bit
            }
        }
    }
}
