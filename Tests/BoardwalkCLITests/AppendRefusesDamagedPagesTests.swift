import BoardwalkGenerator
import BoardwalkModel
import Foundation
import Testing

@testable import BoardwalkStore

/// `ingest` into a store whose LMDB pages are damaged where the append would write: the writer's first transaction
/// checks the meta pages, the roots and the last edge of every tree, and each page a write reaches, before liblmdb
/// reads them, so the append is refused with a message naming `check` and the salvage, the store is marked damaged,
/// and nothing is written. A damaged meta page of the commit before the last blocks nothing.
@Suite("appends refuse damaged pages")
struct AppendRefusesDamagedPagesTests {
    let directory: URL
    init() throws { directory = try temporaryDirectory() }

    /// A store of 400 sessions, as `ingest` leaves it (its logs not folded), and its corpus.
    func makeStore() throws -> (path: String, corpus: Corpus) {
        let db = directory.appendingPathComponent("ingested.db").path
        let corpus = Corpus(sessions: 400, seed: 41)
        let r = try boardwalk(["ingest", "--db", db, "-q", "-"], stdin: corpus.text)
        #expect(r.status == 0, "\(r.stderr)")
        return (db, corpus)
    }

    /// An event line of onboarding `onboarding`, screen `screen`, at `milliseconds`.
    static func line(onboarding: String, screen: Int, milliseconds: Int64) -> String {
        """
        {"timestamp":\(milliseconds),"event_id":"damage-test","event":{"name":"screen_presented"},\
        "meta":{"onboarding_id":"\(onboarding)","screen_cid":"a","screen_index":\(screen),"total_screens":9}}

        """
    }

    /// Copies `pristine`'s data file to a new store `name` with `damage` applied, runs `ingest` of `line` on it.
    func ingest(_ pristine: Data, _ name: String, line: String, _ damage: (inout Data) -> Void) throws -> (
        Execution, copy: String, before: Data
    ) {
        let copy = directory.appendingPathComponent(name).path
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        var data = pristine
        damage(&data)
        try data.write(to: URL(fileURLWithPath: copy + "/data.mdb"))
        return (try boardwalk(["ingest", "--db", copy, "-q", "-"], stdin: line), copy, data)
    }

    /// Expects `run` to be a refusal that names `check` and the salvage, with the store marked and unchanged.
    func expectRefused(_ run: Execution, copy: String, before: Data, _ place: String) throws {
        #expect(run.signal == nil, "\(place): ingest ended by signal \(run.signal ?? 0)\n\(run.stderr)")
        #expect(run.status != 0, "\(place): ingest wrote into a damaged page")
        #expect(run.stderr.contains("export --salvage"), "\(place): \(run.stderr)")
        // `meta` is read at open, which refuses the store before any command can use it.
        if !run.stderr.contains("cannot open the store") {
            #expect(run.stderr.contains("boardwalk check"), "\(place): \(run.stderr)")
            #expect(FileManager.default.fileExists(atPath: copy + "/damaged"), "\(place): the store is not marked")
        }
        let after = try Data(contentsOf: URL(fileURLWithPath: copy + "/data.mdb"))
        #expect(after == before, "\(place): data.mdb changed")
    }

    @Test("a damaged page on the last edge of a tree the append extends refuses it, and nothing is written")
    func lastEdge() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let (db, corpus) = try makeStore()
        let pristine = try Data(contentsOf: URL(fileURLWithPath: db + "/data.mdb"))
        let map = LMDBFileMap(pristine)
        let first = try #require(corpus.events.first?.meta)
        let line = Self.line(onboarding: first.onboardingID, screen: 0, milliseconds: 1_793_491_200_000)
        // The same line into the undamaged store is ingested: the refusals below are the damage's.
        let (control, _, _) = try ingest(pristine, "control", line: line) { _ in }
        #expect(control.status == 0, "\(control.stderr)")
        var tried = 0
        for name in ["events", "event_log", "sessions", "session_log", "strings", "batches", "meta", "session_names"] {
            guard let tree = map.tree(name), tree.root >= 2, let leaf = map.leaves(tree).last else { continue }
            tried += 1
            // The leaf marked as a branch (an assertion in liblmdb); then its first node pointing past the page.
            let cases: [(String, (inout Data) -> Void)] = [
                ("flags", { d in d[leaf * 4096 + 10] = 0x01 }),
                (
                    "node",
                    { d in
                        d[leaf * 4096 + 16] = 0xF0; d[leaf * 4096 + 17] = 0xFF
                    }
                ),
            ]
            for (kind, damage) in cases {
                let (run, copy, before) = try ingest(pristine, "\(name)-\(kind)", line: line, damage)
                try expectRefused(run, copy: copy, before: before, "\(name), last leaf \(leaf), \(kind)")
            }
        }
        #expect(tried >= 6)
    }

    @Test("a damaged leaf inside events, where the append's group has its newest block, refuses the append")
    func groupLeaf() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let (db, corpus) = try makeStore()
        let pristine = try Data(contentsOf: URL(fileURLWithPath: db + "/data.mdb"))
        let map = LMDBFileMap(pristine)
        let events = try #require(map.tree("events"))
        let leaves = map.leaves(events)
        #expect(leaves.count >= 3)
        // The groups of the corpus by the leaf of their newest block: one whose leaf is not the last.
        let store = try Store.open(at: db, options: Store.Options(readOnly: true))
        let groups = Set(corpus.events.compactMap { $0.meta.map { "\($0.onboardingID)\u{1}\($0.screenIndex)" } })
        var target: (onboarding: String, screen: Int, leaf: Int)? = nil
        try store.read { s in
            for group in groups.sorted() {
                let parts = group.split(separator: "\u{1}")
                guard let id = try s.id(of: String(parts[0])), let screen = Int(parts[1]) else { continue }
                let prefix =
                    withUnsafeBytes(of: id.bigEndian) { Data($0) }
                    + withUnsafeBytes(of: UInt16(screen).bigEndian) { Data($0) }
                guard let leaf = leaves.last(where: { page in map.keys(page).contains { $0.prefix(6) == prefix } }),
                    leaf != leaves.last
                else { continue }
                target = (String(parts[0]), screen, leaf)
                return
            }
        }
        store.close()
        let (onboarding, screen, leaf) = try #require(target)
        // The append folds at once (the log's limits at zero), so it grows the group's newest block in `events`.
        let copy = directory.appendingPathComponent("group-leaf").path
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        var data = pristine
        data[leaf * 4096 + 10] = 0x01
        try data.write(to: URL(fileURLWithPath: copy + "/data.mdb"))
        var options = Store.Options()
        options.eventLogLimits = EventLogLimits(batches: 0, bytes: 0)
        options.sessionLogLimits = SessionLogLimits(batches: 0, bytes: 0)
        let damaged = try Store.open(at: copy, options: options)
        defer { damaged.close() }
        var event = try #require(
            corpus.events.last { $0.meta?.onboardingID == onboarding && $0.meta?.screenIndex == screen })
        event.time = Timestamp(microseconds: corpus.events.map(\.time.microseconds).max()! + 60_000_000)
        event.eventID = "damage-test"
        event.session = "damage-test"
        let place = "events leaf \(leaf) of \(onboarding), screen \(screen)"
        #expect(throws: StoreError.self, "\(place): appended") { try damaged.append([event]) }
        do {
            try damaged.append([event])
        } catch let error as StoreError {
            #expect(error.kind == .corrupt)
            #expect(error.message.contains("boardwalk check") && error.message.contains("export --salvage"))
        }
        #expect(damaged.damageFound?.contains("events") == true, "\(place): \(damaged.damageFound ?? "not marked")")
        let after = try Data(contentsOf: URL(fileURLWithPath: copy + "/data.mdb"))
        #expect(after == data, "\(place): data.mdb changed")
    }

    @Test("a damaged meta page of the commit before the last blocks nothing, and the next commit rewrites it")
    func olderMeta() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let (db, corpus) = try makeStore()
        let pristine = try Data(contentsOf: URL(fileURLWithPath: db + "/data.mdb"))
        let older = 1 - LMDBFileMap(pristine).currentMeta
        let first = try #require(corpus.events.first?.meta)
        let line = Self.line(onboarding: first.onboardingID, screen: 0, milliseconds: 1_793_491_200_000)
        // Its last page used, far past the file's end: liblmdb reads only the newer page's.
        let (run, copy, _) = try ingest(pristine, "older-meta", line: line) { d in
            for i in 0..<8 { d[older * 4096 + 136 + i] = 0x7F }
        }
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("note: meta page \(older)"), "\(run.stderr)")
        let store = try Store.open(at: copy)
        try store.append([])
        #expect(store.olderMetaDamage == nil, "a sound store noted: \(store.olderMetaDamage ?? "")")
        store.close()
        let check = try boardwalk(["check", "--db", copy])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        // Noted by the writer that met it.
        let noted = directory.appendingPathComponent("noted.db").path
        try FileManager.default.createDirectory(atPath: noted, withIntermediateDirectories: true)
        var data = pristine
        for i in 0..<8 { data[older * 4096 + 136 + i] = 0x7F }
        try data.write(to: URL(fileURLWithPath: noted + "/data.mdb"))
        let reopened = try Store.open(at: noted)
        defer { reopened.close() }
        try reopened.append([])
        #expect(reopened.olderMetaDamage?.contains("meta page \(older)") == true)
    }
}
