import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What `ingest` and the REPL do for a person at a terminal, on a pseudo-terminal: the stdin hint, Ctrl-D on nothing,
/// the pager.
@Suite("ingest and the REPL on a terminal: the stdin hint and the pager")
struct TerminalComfortTests {
    let directory: URL
    var db: String { directory.appendingPathComponent("db").path }
    init() throws { directory = try temporaryDirectory() }

    /// `boardwalk arguments` on a new pseudo-terminal of `rows` lines.
    func start(_ arguments: [String], environment: [String: String] = [:], rows: UInt16 = 0) throws
        -> (TerminalTests.PTY, Process)
    {
        let pty = try TerminalTests.PTY()
        if rows > 0 {
            var size = winsize(ws_row: rows, ws_col: 100, ws_xpixel: 0, ws_ypixel: 0)
            _ = ioctl(pty.master, 0x5414 /* TIOCSWINSZ */, &size)
        }
        let process = Process()
        process.executableURL = boardwalkExecutable
        process.arguments = arguments
        process.environment = ["TERM": "xterm", "NO_COLOR": "1", "PATH": "/usr/bin:/bin"].merging(environment) { $1 }
        let handle = FileHandle(fileDescriptor: pty.slave, closeOnDealloc: false)
        process.standardInput = handle
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        return (pty, process)
    }

    @Test("ingest on a terminal says it reads standard input and how to end it; Ctrl-D at once leaves no store")
    func ingestHintAndEmptyInput() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let (pty, process) = try start(["ingest", "--db", db])
        #expect(
            pty.expect(
                "reading NDJSON from standard input (the terminal): type or paste the lines, then press Ctrl-D on an "
                    + "empty line to finish (Ctrl-C stops)"), "\(pty.received)")
        pty.send("\u{04}")
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(pty.expect("ingested: 0"))
        #expect(!FileManager.default.fileExists(atPath: db), "the run made a store and left it")

        // A line typed, then Ctrl-D: stored.
        let (typed, again) = try start(["ingest", "--db", db])
        #expect(typed.expect("press Ctrl-D"))
        typed.send(
            #"{"timestamp":1793491200000,"session_id":"s","type":"custom","action_id":"a","#
                + #""meta":{"onboarding_id":"o","screen_cid":"c","screen_index":0,"total_screens":1}}"# + "\n\u{04}")
        again.waitUntilExit()
        #expect(again.terminationStatus == 0, "\(typed.received)")
        #expect(try boardwalk(["query", "--db", db, "--format", "csv", "events | count"]).stdout == "count\n1\n")
    }

    @Test("--quiet, and a file named, read without the hint; an empty input keeps a store that was there")
    func noHint() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let (pty, process) = try start(["ingest", "--db", db, "--quiet"])
        pty.send("\u{04}")
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(!pty.received.contains("reading NDJSON"), "\(pty.received)")
        // A store that was there stays, empty input or not.
        #expect(
            try boardwalk(
                ["ingest", "--db", db, "-q", "-"],
                stdin: #"{"timestamp":1793491200000,"session_id":"s","type":"close","action_id":"x","#
                    + #""meta":{"onboarding_id":"o","screen_cid":"c","screen_index":0,"total_screens":1}}"# + "\n"
            ).status == 0)
        let empty = try boardwalk(["ingest", "--db", db, "-"], stdin: "")
        #expect(empty.status == 0)
        #expect(try boardwalk(["query", "--db", db, "--format", "csv", "events | count"]).stdout == "count\n1\n")
        // Through a pipe, an empty input into a new store leaves none either.
        let other = directory.appendingPathComponent("other.db").path
        #expect(try boardwalk(["ingest", "--db", other, "-"], stdin: "").status == 0)
        #expect(!FileManager.default.fileExists(atPath: other))
    }

    @Test("A result taller than the terminal goes through $PAGER; a short one, a file and PAGER= do not")
    func pager() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let (pty, process) = try start(
            ["repl", "--generated", "30"], environment: ["PAGER": "sed 's/^/paged: /'"], rows: 20)
        #expect(pty.expect("boardwalk> "))
        pty.send("events | sort seq | limit 40 | select seq\r")
        #expect(pty.expect("paged: seq"), "\(pty.received)")
        #expect(pty.expect("paged:  39"), "\(pty.received)")
        #expect(pty.expect("boardwalk> "))
        pty.send("events | count\r")
        #expect(pty.expect("count\r\n-----\r\n"), "\(pty.received)")
        #expect(!pty.consumed.contains("paged"))
        #expect(pty.expect("boardwalk> "))
        let file = directory.appendingPathComponent("out.txt").path
        pty.send(".output \(file)\r")
        #expect(pty.expect("boardwalk> "))
        pty.send("events | sort seq | limit 40 | select seq\r")
        #expect(pty.expect("boardwalk> "))
        pty.send(".output\r")
        #expect(pty.expect("boardwalk> "))
        pty.send(".quit\r")
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let written = try String(contentsOfFile: file, encoding: .utf8)
        #expect(written.hasPrefix("seq\n---\n  0\n") && !written.contains("paged"), "\(written)")

        let (plain, run) = try start(["repl", "--generated", "30"], environment: ["PAGER": ""], rows: 20)
        #expect(plain.expect("boardwalk> "))
        plain.send("events | sort seq | limit 40 | select seq\r")
        #expect(plain.expect(" 39\r\n"), "\(plain.received)")
        #expect(!plain.consumed.contains("paged"))
        plain.send(".quit\r")
        run.waitUntilExit()
    }
}
