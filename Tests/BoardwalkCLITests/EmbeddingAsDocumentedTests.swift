// swift-format-ignore-file
// This file holds copies of documentation code blocks, compared with them line by line, so it keeps the
// documents' layout (aligned comments) rather than the formatter's.
import Boardwalk
import Foundation
import Testing

// A newcomer embedding the library with only README.md and docs/storage.md at hand, through the `Boardwalk` umbrella
// the documents import. The two complete programs (README's "Embed it", docs/storage.md's "A complete program") are
// compiled here as written, between `// doc block <name>` and `// end doc block`, and `examplesMatchTheDocuments`
// fails when a copy differs from its document; each program's printed output must equal the block the document
// shows after it (`<!-- embed-output: <name> -->`), which CI also checks in a package that depends on Boardwalk by
// version. The other tests do what a passage of the documents shows and check that the library behaves as the
// passage says; EmbeddingGuideTests and EmbeddingQueryGuideTests compile the guide's other blocks.

@Suite("Embedding the library as the documents show: the complete programs and the claims around them")
struct EmbeddingAsDocumentedTests {
    private static let t0 = Timestamp(iso8601: "2026-11-10T10:00:00Z")!

    private static func event(_ session: String?, screen: Int, second: Int64, _ payload: Payload, id: String?,
                              onboarding: String = "onb_1") -> Event {
        Event(time: Timestamp(microseconds: t0.microseconds + second * 1_000_000), session: session, eventID: id,
              meta: Meta(onboardingID: onboarding, screenClientID: "s\(screen)", screenIndex: screen, totalScreens: 4),
              payload: payload)
    }

    @Test("the complete programs here are the ones README.md and docs/storage.md show")
    func examplesMatchTheDocuments() throws {
        for (document, name) in [("README.md", "readme"), ("docs/storage.md", "storage")] {
            let shown = EmbedExample.normalized(try EmbedExample.block(in: document, marker: "embed-example: \(name)"))
            let copy = try EmbedExample.region(name, in: #filePath)
            #expect(shown == copy, "\(document)'s embed-example \(name) differs from its copy in this file")
        }
    }

    @Test("README's embed block: append, query, typed cell, and the output README shows")
    func readmeBlock() throws {
        var output = ""
        func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
            output += items.map { String(describing: $0) }.joined(separator: separator) + terminator
        }
        // doc block readme
        // A new store in a directory of its own (Store.open creates the directory, not its parents).
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("boardwalk-\(UUID().uuidString)")
        let store = try Store.open(at: directory.path)

        // Three presentations (sessions) of a four-screen onboarding: s1 sees every screen, s2 two, s3 one.
        let start = Timestamp(iso8601: "2026-11-10T10:00:00Z")!
        let shown: [(session: String, screen: Int, second: Int64)] = [
            ("s1", 0, 0), ("s1", 1, 8), ("s1", 2, 20), ("s1", 3, 31),
            ("s2", 0, 60), ("s2", 1, 75),
            ("s3", 0, 120),
        ]
        let events = shown.map { s in
            Event(time: Timestamp(microseconds: start.microseconds + s.second * 1_000_000), session: s.session,
                  eventID: "\(s.session)-\(s.screen)",  // makes a retried append harmless
                  meta: Meta(onboardingID: "onb_1", screenClientID: "screen-\(s.screen)", screenIndex: s.screen, totalScreens: 4),
                  payload: .analytics(.screenPresented))
        }
        let result = try store.append(events)  // one transaction, durable when it returns
        print("stored \(result.appended) events")

        let table = try Query.parse(#"sessions | where onboarding == "onb_1" | funnel"#).run(on: StoreEventSource(store))
        print(table.render(.table))
        print(table[1, "sessions"]?.intValue ?? 0)  // a cell as a Swift value: row 1, column "sessions"

        store.close()
        try FileManager.default.removeItem(at: directory)
        // end doc block
        #expect(table[0, "sessions"]?.intValue == 3)
        #expect(table.rows.count == 4, "the screen funnel runs to total_screens - 1")
        #expect(table.render(.table).contains("sessions"))
        #expect(!FileManager.default.fileExists(atPath: directory.path), "the program removes its store")
        #expect(output == (try EmbedExample.block(in: "README.md", marker: "embed-output: readme")) + "\n")
    }

    @Test("docs/storage.md's complete program prints what the document shows")
    func storageProgram() throws {
        var output = ""
        func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
            output += items.map { String(describing: $0) }.joined(separator: separator) + terminator
        }
        // doc block storage
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("boardwalk-\(UUID().uuidString)")
        let store = try Store.open(at: directory.path)  // creates the store; Store.Options() has the defaults

        /// An event of onboarding `onb_quiz` (three screens), `second`s after 10:00 on 10 November 2026.
        func event(_ id: String, session: String?, screen: Int, second: Int64, _ payload: Payload) -> Event {
            Event(time: Timestamp(microseconds: 1_794_304_800_000_000 + second * 1_000_000), session: session,
                  profile: "profile-7", eventID: id,
                  meta: Meta(onboardingID: "onb_quiz", screenClientID: "screen-\(screen)", screenIndex: screen, totalScreens: 3),
                  payload: payload)
        }
        let level = StateUpdate(elementID: "level", value: .select(Choice(id: "o2", value: "pro", label: "Pro")))
        let batch = [
            event("e1", session: "c-1", screen: 0, second: 0, .analytics(.onboardingStarted)),
            event("e2", session: "c-1", screen: 0, second: 0, .analytics(.screenPresented)),
            event("e3", session: "c-1", screen: 1, second: 9, .analytics(.screenPresented)),
            event("e4", session: "c-1", screen: 1, second: 14, .stateUpdated(level)),
            event("e5", session: "c-1", screen: 2, second: 21, .analytics(.onboardingCompleted)),
            event("e6", session: nil, screen: 0, second: 300, .analytics(.screenPresented)),  // no session id: inferred
        ]

        // The checkpoint commits in the batch's transaction: an importer keeps how far it got there.
        let first = try store.append(batch, checkpoint: Checkpoint(key: "import", value: [6]))
        print("appended \(first.appended) events, seqs \(first.seqs)")
        let retry = try store.append(batch)  // the same upload again: same ids, times and screens
        print("retried: appended \(retry.appended), duplicates \(retry.duplicates)")

        try store.read { snapshot in  // one consistent snapshot, valid only inside the closure
            let stats = try snapshot.stats()
            print("events \(stats.events), sessions \(stats.sessions) (\(stats.inferredSessions) inferred)")
            print("sessions of onb_quiz:", try snapshot.sessions(ofOnboarding: "onb_quiz").map(\.session))
            for stored in try snapshot.events(inSession: "c-1") {  // owned events, in (time, seq) order
                let what = switch stored.event.payload {
                case .analytics(let analytics): analytics.name
                default: stored.event.kind.rawValue
                }
                print("  seq \(stored.seq) at \(stored.event.time): \(what) on screen \(stored.event.meta?.screenIndex ?? -1)")
            }
            var presented = 0
            try snapshot.forEachEvent(onboarding: "onb_quiz", screens: 0...1) { view in  // borrowed views, key order
                if view.record.knownAnalyticsName == .screenPresented { presented += 1 }
                return true  // false stops the scan
            }
            print("screen_presented on screens 0-1: \(presented)")
            print("resume the import at: \(try snapshot.checkpoint("import") ?? [])")
        }
        print("check: \(try store.check().isOK ? "no problems" : "damaged")")
        store.close()
        try FileManager.default.removeItem(at: directory)
        // end doc block
        #expect(first.appended == 6 && retry.duplicates == 6)
        #expect(!FileManager.default.fileExists(atPath: directory.path), "the program removes its store")
        #expect(output == (try EmbedExample.block(in: "docs/storage.md", marker: "embed-output: storage")) + "\n")
    }

    @Test("append counts duplicates (same id, or same content without one; time, group), across batches and inside one")
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
        // An empty event id is no id: two such events are the same event when their content is the same, and are
        // kept apart with `keepIdentical`.
        let noID = Self.event("S", screen: 3, second: 9, .analytics(.screenPresented), id: "")
        let identical = try store.append([noID, noID])
        #expect(identical.appended == 1 && identical.duplicates == 1)
        #expect(try store.append([noID, noID], keepIdentical: true).appended == 2)
        let stats = try store.read { try $0.stats() }
        #expect(stats.events == 6 && stats.duplicatesSkipped == 4)
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

    @Test("an LMDB failure is a StoreError carrying the errno and mdb_strerror's text")
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
        } catch let error as StoreError {
            #expect(error.kind == .system)
            #expect(error.errno == StoreError.Errno(rawValue: EISDIR))
            #expect(error.errno?.description == String(cString: strerror(EISDIR)))
            #expect(error.message.hasPrefix("mdb_env_open"))
            #expect(error.description.contains("LMDB error \(EISDIR): \(String(cString: strerror(EISDIR)))"))
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
        #expect(StoreError(lmdbCode: -30792).description
                == "LMDB error -30792: MDB_MAP_FULL: Environment mapsize limit reached")
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

/// The fenced blocks of the documents marked `<!-- embed-example: NAME -->` and `<!-- embed-output: NAME -->`, and the
/// copies of the programs in this file.
enum EmbedExample {
    struct Missing: Error, CustomStringConvertible {
        var description: String
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The body of the fenced block on the line after `<!-- marker -->` in `document` (a path from the repository's
    /// root), without its fences.
    static func block(in document: String, marker: String) throws -> String {
        let path = root.appendingPathComponent(document).path
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        guard let at = lines.firstIndex(of: "<!-- \(marker) -->"), at + 1 < lines.count, lines[at + 1].hasPrefix("```"),
              let end = lines[(at + 2)...].firstIndex(of: "```")
        else { throw Missing(description: "\(path): no fenced block after <!-- \(marker) -->") }
        return lines[(at + 2)..<end].joined(separator: "\n")
    }

    /// The lines between `// doc block <name>` and the next `// end doc block` of the file at `path`, normalized.
    static func region(_ name: String, in path: String) throws -> String {
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        guard let begin = lines.firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "// doc block \(name)" }),
              let end = lines[begin...].firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "// end doc block" })
        else { throw Missing(description: "\(path): no region \"// doc block \(name)\" … \"// end doc block\"") }
        return normalized(lines[(begin + 1)..<end].joined(separator: "\n"))
    }

    /// The code without `import` lines, trailing spaces, surrounding blank lines and common indentation.
    static func normalized(_ code: String) -> String {
        var lines = code.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            var line = line
            while line.last == " " { line.removeLast() }
            return line
        }
        lines.removeAll { $0.hasPrefix("import ") }
        while lines.first?.isEmpty == true { lines.removeFirst() }
        while lines.last?.isEmpty == true { lines.removeLast() }
        let indent = lines.filter { !$0.isEmpty }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
        return lines.map { $0.isEmpty ? "" : String($0.dropFirst(indent)) }.joined(separator: "\n")
    }
}
