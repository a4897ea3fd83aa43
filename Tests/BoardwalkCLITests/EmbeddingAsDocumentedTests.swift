import Boardwalk
import Foundation
import Testing

// QA, session 9: a newcomer embedding the library with only README.md and docs/storage.md ("The Swift API",
// "Recording what an onboarding delegate receives") at hand, through the `Boardwalk` umbrella the documents
// import. Each test does what a passage of the documents shows and checks that the library behaves as the
// passage says; the guide's own tests (EmbeddingGuideTests, EmbeddingQueryGuideTests) check that its blocks
// compile, these check the claims around them.

@Suite("QA9: embedding the library as the documents show")
struct EmbeddingAsDocumentedQA9Tests {
    private static let t0 = Timestamp(iso8601: "2026-11-10T10:00:00Z")!

    private static func event(_ session: String?, screen: Int, second: Int64, _ payload: Payload, id: String?,
                              onboarding: String = "onb_1") -> Event {
        Event(time: Timestamp(microseconds: t0.microseconds + second * 1_000_000), session: session, eventID: id,
              meta: Meta(onboardingID: onboarding, screenClientID: "s\(screen)", screenIndex: screen, totalScreens: 4),
              payload: payload)
    }

    @Test("README's embed block: append, query, typed cell")
    func readmeBlock() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try Store.open(at: dir.appendingPathComponent("events.db").path)
        defer { store.close() }
        let presentation = UUID().uuidString
        try store.append([
            Event(time: Timestamp(milliseconds: 1_793_527_200_000), session: presentation, eventID: UUID().uuidString,
                  meta: Meta(onboardingID: "onb_1", screenClientID: "welcome", screenIndex: 0, totalScreens: 8),
                  payload: .analytics(.screenPresented)),
        ])
        let table = try Query.parse(#"sessions | where onboarding == "onb_1" | funnel"#).run(on: StoreEventSource(store))
        #expect(table[0, "sessions"]?.intValue == 1)
        #expect(table.rows.count == 8, "the screen funnel runs to total_screens - 1")
        #expect(table.render(.table).contains("sessions"))
    }

    @Test("append counts duplicates (same id, time, group), across batches and inside one")
    func duplicatesCounted() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try Store.open(at: dir.appendingPathComponent("s").path)
        defer { store.close() }
        let a = Self.event("S", screen: 0, second: 0, .analytics(.screenPresented), id: "e1")
        let b = Self.event("S", screen: 1, second: 5, .analytics(.screenPresented), id: "e2")
        let first = try store.append([a, b, a])
        #expect(first.appended == 2 && first.duplicates == 1 && first.seqs == 0..<2)
        let again = try store.append([a, b])
        #expect(again.appended == 0 && again.duplicates == 2 && again.seqs.isEmpty)
        // Same id and time on another screen is another event (docs/storage.md, "Duplicates").
        var moved = a
        moved.meta = Meta(onboardingID: "onb_1", screenClientID: "s2", screenIndex: 2, totalScreens: 4)
        #expect(try store.append([moved]).appended == 1)
        // An empty event id is never a duplicate.
        let noID = Self.event("S", screen: 3, second: 9, .analytics(.screenPresented), id: "")
        #expect(try store.append([noID, noID]).appended == 2)
        let stats = try store.read { try $0.stats() }
        #expect(stats.events == 5 && stats.duplicatesSkipped == 3)
    }

    @Test("checkpoints commit with their batch and read back; a failing write stores nothing")
    func checkpointsAndWriteClosure() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try Store.open(at: dir.appendingPathComponent("s").path)
        defer { store.close() }
        try store.append([Self.event("S", screen: 0, second: 0, .analytics(.onboardingStarted), id: "a")],
                         checkpoint: Checkpoint(key: "import", value: [1, 2, 3]))
        #expect(try store.read { try $0.checkpoint("import") } == [1, 2, 3])
        #expect(try store.read { try $0.checkpoint("never") } == nil)

        let soFar = try store.write { w in
            try w.append([Self.event("S", screen: 1, second: 1, .analytics(.screenPresented), id: "b")])
            try w.setCheckpoint(Checkpoint(key: "import", value: [9]))
            return try w.snapshot.stats().events
        }
        #expect(soFar == 2)
        #expect(try store.read { try $0.checkpoint("import") } == [9])

        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try store.write { w in
                try w.append([Self.event("S", screen: 2, second: 2, .analytics(.screenPresented), id: "c")])
                try w.setCheckpoint(Checkpoint(key: "import", value: [42]))
                throw Stop()
            }
        }
        #expect(try store.read { try $0.stats().events } == 2, "the closure's error aborts its transaction")
        #expect(try store.read { try $0.checkpoint("import") } == [9])

        // "an empty checkpoint key" is an invalidArgument (StoreError.Kind's documentation).
        do {
            try store.append([], checkpoint: Checkpoint(key: "", value: [1]))
            Issue.record("an empty checkpoint key was accepted")
        } catch let error as StoreError {
            #expect(error.kind == .invalidArgument)
        }
    }

    @Test("the errors the API section lists, each with its kind and a message naming the path")
    func documentedErrors() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("s").path
        let store = try Store.open(at: path)

        // A second open in one process.
        do {
            _ = try Store.open(at: path)
            Issue.record("a second open succeeded")
        } catch let error as StoreError {
            #expect(error.kind == .alreadyOpen)
            #expect(error.message.contains(path))
        }
        // store.append inside read { } and write { }.
        let e = Self.event("S", screen: 0, second: 0, .analytics(.screenPresented), id: "x")
        do {
            _ = try store.read { _ in try store.append([e]) }
            Issue.record("append inside read succeeded")
        } catch let error as StoreError {
            #expect(error.kind == .insideTransaction)
        }
        do {
            _ = try store.write { _ in try store.append([e]) }
            Issue.record("append inside write succeeded")
        } catch let error as StoreError {
            #expect(error.kind == .insideTransaction)
        }
        // An event the record format cannot hold names its index in the batch; nothing of the batch is stored.
        var tooFar = e
        tooFar.meta = Meta(onboardingID: "onb_1", screenClientID: "far", screenIndex: Meta.maxScreenIndex + 1,
                           totalScreens: 4)
        do {
            try store.append([e, tooFar])
            Issue.record("a screen index past the maximum was stored")
        } catch let error as StoreError {
            #expect(error.kind == .invalidArgument && error.batchIndex == 1)
            #expect(error.underlying is EncodingError)
        }
        #expect(try store.read { try $0.stats().events } == 0)

        // backup(to:) refuses a directory that holds anything.
        let full = dir.appendingPathComponent("full")
        try FileManager.default.createDirectory(at: full, withIntermediateDirectories: false)
        try Data("x".utf8).write(to: full.appendingPathComponent("file"))
        do {
            try store.backup(to: full.path)
            Issue.record("backup into a non-empty directory succeeded")
        } catch let error as StoreError {
            #expect(error.kind == .invalidArgument)
        }
        // After close, every call throws .closed.
        store.close()
        do {
            _ = try store.read { try $0.stats() }
            Issue.record("a read after close succeeded")
        } catch let error as StoreError {
            #expect(error.kind == .closed)
        }
        // A regular file, and a non-empty directory without a store, are not stores.
        let file = dir.appendingPathComponent("plain.txt")
        try Data("hello".utf8).write(to: file)
        for notAStore in [file.path, full.path] {
            do {
                _ = try Store.open(at: notAStore)
                Issue.record("\(notAStore) opened as a store")
            } catch let error as StoreError {
                #expect(error.kind == .notAStore, "\(error)")
            }
        }
    }

    @Test("an LMDB failure is an LMDBError carrying the C code and mdb_strerror's text")
    func lmdbErrorCarriesCodeAndText() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try Store.open(at: dir.appendingPathComponent("s").path)
        defer { store.close() }
        // A store whose data file cannot be opened as one (a directory named data.mdb): mdb_env_open fails with
        // EISDIR, and the error keeps LMDB's code and text.
        let odd = dir.appendingPathComponent("odd")
        try FileManager.default.createDirectory(at: odd.appendingPathComponent("data.mdb"), withIntermediateDirectories: true)
        do {
            _ = try Store.open(at: odd.path)
            Issue.record("a store with a directory for data.mdb opened")
        } catch let error as LMDBError {
            #expect(error.code == EISDIR)
            #expect(error.message == String(cString: strerror(EISDIR)))
            #expect(error.context.hasPrefix("mdb_env_open"))
            #expect(error.description.contains("LMDB error \(EISDIR): \(error.message)"))
        }
        // A backup into a directory whose parent does not exist is refused before LMDB is called.
        let missing = dir.appendingPathComponent("no/such/parent/copy").path
        do {
            try store.backup(to: missing)
            Issue.record("a backup into a missing parent succeeded")
        } catch let error as StoreError {
            #expect(error.kind == .invalidArgument)
            #expect(error.message.contains(missing), "\(error)")
        }
        #expect(LMDBError(code: -30792).description == "LMDB error -30792: MDB_MAP_FULL: Environment mapsize limit reached")
    }

    @Test("check() and backup(to:): a copy that is itself a store with the same events")
    func checkAndBackup() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let copyPath = dir.appendingPathComponent("copy").path
        let original: StoreStats
        do {
            let store = try Store.open(at: dir.appendingPathComponent("s").path)
            defer { store.close() }
            let events = (0..<40).map { i in
                Self.event(i % 3 == 0 ? nil : "S\(i % 5)", screen: i % 4, second: Int64(i), .analytics(.screenPresented),
                           id: "e\(i)")
            }
            try store.append(events)
            let report = try store.check()
            #expect(report.isOK, "\(report)")
            try store.backup(to: copyPath)
            original = try store.read { try $0.stats() }
        }
        let copy = try Store.open(at: copyPath)
        defer { copy.close() }
        let copied = try copy.read { try $0.stats() }
        #expect(copied.events == original.events && copied.sessions == original.sessions)
        #expect(copied.inferredSessions == original.inferredSessions && copied.eventsByKind == original.eventsByKind)
        #expect(try copy.check().isOK)
    }

    // The guide's recorder is compiled from the document and exercised by EmbeddingGuideTests (BoardwalkStoreTests);
    // a second copy here could drift from it unnoticed.
    @Test("the guide's query error example: a type error at line 1, column 21, with a caret")
    func guideErrorExample() throws {
        do {
            _ = try Query.parse(#"sessions | count by answr("level")"#)
            Issue.record("a misspelt function parsed")
        } catch {
            #expect(error.kind == .type)
            #expect(error.location?.line == 1 && error.location?.column == 21)
            #expect(error.description.contains("^"))
        }
    }
}
