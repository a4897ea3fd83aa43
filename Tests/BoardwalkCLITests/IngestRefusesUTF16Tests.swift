import Foundation
import Testing

// A UTF-16 NDJSON file (what `>` writes in Windows PowerShell 5) is refused when it is opened, before anything is
// stored, with the iconv command that converts it. Read as UTF-8 it would be one rejected line per line, and its last
// "line" (a lone zero byte after the final newline) a line a writer is still finishing, read again by every later run.

@Suite("Ingest refuses a file in UTF-16 or UTF-32 and names the conversion")
struct IngestRefusesUTF16Tests {
    static let line =
        #"{"type":"analytics","name":"screen_presented","timestamp":1793491200000,"event_id":"e1","meta":{"onboarding_id":"o","screen_cid":"s","screen_index":0,"total_screens":2}}"#

    @Test(
        "refused before anything is stored, naming the encoding iconv needs",
        arguments: [
            ("UTF-16", String.Encoding.utf16), ("UTF-16LE", .utf16LittleEndian), ("UTF-16BE", .utf16BigEndian),
            ("UTF-32", .utf32), ("UTF-32LE", .utf32LittleEndian), ("UTF-32BE", .utf32BigEndian),
        ])
    func refused(name: String, encoding: String.Encoding) throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let good = dir.appendingPathComponent("good.ndjson")
        let wide = dir.appendingPathComponent("wide.ndjson")
        try Data((Self.line + "\n").utf8).write(to: good)
        try #require((Self.line + "\n" + Self.line + "\n").data(using: encoding)).write(to: wide)
        let db = dir.appendingPathComponent("db").path
        let run = try boardwalk(["ingest", "--db", db, good.path, wide.path], directory: dir)
        #expect(run.status == 1)
        #expect(
            run.stderr
                == "Error: cannot read '\(wide.path)': it is \(name) text; ingest reads UTF-8 NDJSON: convert it first "
                + "(iconv -f \(name) -t UTF-8 '\(wide.path)' > '\(wide.path).utf8')\n")
        #expect(run.stdout.isEmpty, "no summary: nothing was read")
        #expect(!FileManager.default.fileExists(atPath: db), "the store is not even created")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("boardwalk-rejects.txt").path))
    }

    @Test("the converted file ingests; a file of zero bytes is not taken for UTF-16")
    func convertedAndZeros() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = dir.appendingPathComponent("db").path
        let converted = dir.appendingPathComponent("wide.ndjson.utf8")
        try Data((Self.line + "\n").utf8).write(to: converted)
        let ok = try boardwalk(["ingest", "--db", db, "-q", converted.path], directory: dir)
        #expect(ok.status == 0, "\(ok.stderr)")
        let zeros = dir.appendingPathComponent("zeros.ndjson")
        try Data(repeating: 0, count: 64).write(to: zeros)
        let run = try boardwalk(["ingest", "--db", db, zeros.path], directory: dir)
        #expect(run.status == 2, "rejected as a bad line, as before: \(run.stderr)")
        #expect(!run.stderr.contains("UTF-16"))
    }
}
