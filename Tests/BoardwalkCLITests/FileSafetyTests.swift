import Foundation
import Testing

// Files a command writes never destroy what the user named: `ingest --rejects F F` would truncate the input F at its
// first rejected line while it is still being read; `--rejects <store>/data.mdb` would crash with a bus error and leave
// the store empty; `export -o F` must not empty F before it finds that `--db` names no store, nor leave a truncated F
// when it fails part-way.

@Suite("What a command writes never destroys what it was given")
struct FileSafetyTests {
    let directory: URL
    let db: String
    let corpus = Corpus(sessions: 40, seed: 13)

    init() throws {
        directory = try temporaryDirectory()
        db = directory.appendingPathComponent("s.db").path
    }

    func contents(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

    @Test("--rejects naming an input, a store file or a directory is refused before anything is read")
    func rejectsFile() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in.ndjson").path
        let text = corpus.text + "{bad\n"
        try text.write(toFile: input, atomically: true, encoding: .utf8)
        let same = try boardwalk(["ingest", "--db", db, "--rejects", input, input])
        #expect(same.status == 64)
        #expect(same.stderr.contains("is both an input and the rejects file"), "\(same.stderr)")
        #expect(contents(input) == text, "the input is untouched")
        // Through another name too.
        let link = directory.appendingPathComponent("link.ndjson").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: input)
        #expect(try boardwalk(["ingest", "--db", db, "--rejects", link, input]).status == 64)
        #expect(contents(input) == text)

        #expect(
            try boardwalk([
                "ingest", "--db", db, "-q", "--rejects", directory.appendingPathComponent("r.txt").path, input,
            ]).status == 2)
        let events = try boardwalk(["stats", "--db", db, "-f", "json"]).stdout
        let intoStore = try boardwalk(["ingest", "--db", db, "--rejects", db + "/data.mdb", input])
        #expect(intoStore.status == 64)
        #expect(intoStore.stderr.contains("one of the store's own files"), "\(intoStore.stderr)")
        #expect(try boardwalk(["check", "--db", db]).status == 0)
        #expect(try boardwalk(["stats", "--db", db, "-f", "json"]).stdout == events)

        let folder = try boardwalk(["ingest", "--db", db, "--rejects", directory.path, input])
        #expect(folder.status == 64)
        #expect(folder.stderr.contains("is a directory"), "\(folder.stderr)")
    }

    @Test("export -o replaces its file only once the export is whole")
    func exportOutput() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let kept = directory.appendingPathComponent("kept.ndjson").path
        try "yesterday's export\n".write(toFile: kept, atomically: true, encoding: .utf8)
        // A mistyped --db: the error is the store's, and the file is as it was.
        let missing = try boardwalk(["export", "--db", directory.appendingPathComponent("nope").path, "-o", kept])
        #expect(missing.status == 1)
        #expect(missing.stderr.hasPrefix("Error: no store at "))
        #expect(contents(kept) == "yesterday's export\n")

        #expect(try boardwalk(["ingest", "--db", db, "-q", "-"], stdin: corpus.text).status == 0)
        // An export that fails part-way (an event ClickHouse's DateTime64 cannot hold, after the others): the file is
        // as it was, no partial file is left beside it, and the message says so.
        let far =
            #"{"timestamp": 13569465600000, "kind": "onboarding_loaded", "session_id": "far", "meta": {"onboarding_id": "o", "screen_cid": "c", "screen_index": 0, "total_screens": 1}}"#
        #expect(try boardwalk(["ingest", "--db", db, "-q", "-"], stdin: far + "\n").status == 0)
        let failed = try boardwalk(["export", "--db", db, "--format", "clickhouse", "-o", kept])
        #expect(failed.status == 1)
        #expect(failed.stderr.contains("the export is incomplete ('\(kept)' was left as it was)"), "\(failed.stderr)")
        #expect(contents(kept) == "yesterday's export\n")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).allSatisfy { !$0.contains(".partial-") }
        )

        // A whole export replaces it, with every event.
        let done = try boardwalk(["export", "--db", db, "-o", kept])
        #expect(done.status == 0)
        #expect(contents(kept)?.split(separator: "\n").count == corpus.events.count + 1)

        // Never over the store's own files.
        let intoStore = try boardwalk(["export", "--db", db, "-o", db + "/data.mdb"])
        #expect(intoStore.status == 64)
        #expect(try boardwalk(["check", "--db", db]).status == 0)
    }
}

@Suite("The summary says where rejected lines went only when they got there")
struct RejectsSummaryTests {
    @Test("a default rejects file that cannot be made: 'not all listed', never 'listed in'")
    func unmakeableDefault() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let db = directory.appendingPathComponent("s.db").path
        // The default `./boardwalk-rejects.txt` is a link into a directory that does not exist: it cannot be created,
        // whoever runs the test (root included).
        try FileManager.default.createSymbolicLink(
            atPath: directory.appendingPathComponent("boardwalk-rejects.txt").path,
            withDestinationPath: directory.appendingPathComponent("gone/x").path)
        let r = try boardwalk(["ingest", "--db", db, "-"], stdin: "{bad\n", directory: directory)
        #expect(r.status == 1)
        #expect(r.stderr.contains("cannot write the rejects file"), "\(r.stderr)")
        #expect(!r.stdout.contains("listed in"), "\(r.stdout)")
        #expect(r.stdout.contains("rejected: 1 (not all listed"), "\(r.stdout)")
    }
}

@Suite("A file holding only a byte-order mark is an empty file")
struct ByteOrderMarkOnlyTests {
    @Test(
        "a byte-order mark alone, with or without a newline, is a blank line: nothing rejected, exit 0",
        arguments: [
            "\u{FEFF}", "\u{FEFF}\n", "\u{FEFF}\r\n", "\u{FEFF}  \n\n",
        ])
    func onlyAMark(text: String) throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let db = directory.appendingPathComponent("s.db").path
        let file = directory.appendingPathComponent("empty.ndjson").path
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        let r = try boardwalk(["ingest", "--db", db, "--rejects", directory.appendingPathComponent("r.txt").path, file])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("ingested: 0\n") && r.stdout.contains("rejected: 0\n"), "\(r.stdout)")
        // A mark on a later line is still an error.
        try "\n\u{FEFF}\n".write(toFile: file, atomically: true, encoding: .utf8)
        #expect(
            try boardwalk(["ingest", "--db", db, "--rejects", directory.appendingPathComponent("r.txt").path, file])
                .status == 2)
    }
}
