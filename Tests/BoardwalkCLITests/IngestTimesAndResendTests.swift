import Foundation
import Testing

/// `ingest` through the real binary: numeric times in any unit, `--time-unit`, and the same data sent twice.
@Suite("ingest: numeric times and resent data")
struct IngestTimesAndResendTests {
    let directory: URL
    var db: String { directory.appendingPathComponent("db").path }
    var rejects: String { directory.appendingPathComponent("rejects.txt").path }
    init() throws { directory = try temporaryDirectory() }

    func write(_ text: String, _ name: String) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }

    static func line(_ time: String, action: String, session: String = "s") -> String {
        #"{"ts":\#(time),"session_id":"\#(session)","type":"custom","action_id":"\#(action)","meta":{"onboarding_id":"o","screen_cid":"c","screen_index":0,"total_screens":2}}"#
            + "\n"
    }

    func times(_ db: String) throws -> [String] {
        let r = try boardwalk(["query", "--db", db, "--format", "csv", "events | select time, action | sort time"])
        #expect(r.status == 0, "\(r.stderr)")
        return r.stdout.split(separator: "\n").dropFirst().map(String.init)
    }

    @Test(
        "Seconds, milliseconds, microseconds and fractional seconds are told by size; an ambiguous number is rejected")
    func unitsBySize() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = try write(
            Self.line("1793491200", action: "s") + Self.line("1793491201500", action: "ms")
                + Self.line("1793491202250000", action: "us") + Self.line("1793491203.75", action: "frac")
                + Self.line("500000000", action: "ambiguous"), "times.ndjson")
        let r = try boardwalk(["ingest", "--db", db, "--rejects", rejects, input])
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stdout.contains("ingested: 4\n"), "\(r.stdout)")
        #expect(
            try times(db) == [
                "2026-11-01T00:00:00.000000Z,s", "2026-11-01T00:00:01.500000Z,ms", "2026-11-01T00:00:02.250000Z,us",
                "2026-11-01T00:00:03.750000Z,frac",
            ])
        let listed = try String(contentsOfFile: rejects, encoding: .utf8)
        #expect(
            listed.hasPrefix(
                "\(input):5: line 5, column 7, ts: the epoch time 500000000 could be in more than one unit: seconds, "
                    + "milliseconds and microseconds are told apart by size only for times after 2001-09-09; give the "
                    + "unit (--time-unit s|ms|us, EventReader.timeUnit)\n"), "\(listed)")
    }

    @Test("--time-unit fixes the unit of every numeric time of the run")
    func unitGiven() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = try write(Self.line("500000000", action: "a") + Self.line("1793491200", action: "b"), "s.ndjson")
        let seconds = try boardwalk(["ingest", "--db", db, "--rejects", rejects, "--time-unit", "s", input])
        #expect(seconds.status == 0, "\(seconds.stderr)")
        #expect(try times(db) == ["1985-11-05T00:53:20.000000Z,a", "2026-11-01T00:00:00.000000Z,b"])
        let msDB = directory.appendingPathComponent("ms.db").path
        let ms = try boardwalk(
            ["ingest", "--db", msDB, "--rejects", rejects, "--time-unit=ms", "-"],
            stdin: Self.line(
                "500000000", action: "a"))
        #expect(ms.status == 0, "\(ms.stderr)")
        #expect(try times(msDB) == ["1970-01-06T18:53:20.000000Z,a"])
        let bad = try boardwalk(["ingest", "--db", db, "--time-unit", "ns", input])
        #expect(bad.status == 64)
        #expect(
            bad.stderr.hasPrefix("Error: option '--time-unit' must be one of s, ms, us, got 'ns'\n"), "\(bad.stderr)")
    }

    @Test("The same lines piped twice are stored once, without event ids too; --keep-identical stores them again")
    func resent() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        // No event ids; the last two lines are identical.
        let text =
            Self.line("1793491200000", action: "a") + Self.line("1793491200000", action: "a", session: "t")
            + Self.line("1793491201000", action: "b") + Self.line("1793491202000", action: "c")
            + Self.line("1793491202000", action: "c")
        let first = try boardwalk(["ingest", "--db", db, "-"], stdin: text)
        #expect(first.stdout.contains("lines: 5\ningested: 4\nduplicates: 1\n"), "\(first.stdout)")
        let again = try boardwalk(["ingest", "--db", db, "-"], stdin: text)
        #expect(again.status == 0)
        #expect(again.stdout.contains("lines: 5\ningested: 0\nduplicates: 5\n"), "\(again.stdout)")
        let kept = try boardwalk(["ingest", "--db", db, "--keep-identical", "-"], stdin: text)
        #expect(kept.stdout.contains("lines: 5\ningested: 5\nduplicates: 0\n"), "\(kept.stdout)")
        let count = try boardwalk(["query", "--db", db, "--format", "csv", "events | count"])
        #expect(count.stdout == "count\n9\n")
    }
}
