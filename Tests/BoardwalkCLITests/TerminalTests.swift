import BoardwalkGenerator
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The REPL on a pseudo-terminal: prompts, tab completion, continuation lines, errors, history.
@Suite("REPL on a terminal")
struct TerminalTests {
    /// A pseudo-terminal pair: the test holds the master, the child gets the slave as stdin/stdout/stderr.
    final class PTY {
        let master: Int32
        let slave: Int32
        var received = ""
        /// What ``expect(_:)`` skipped before the text it last found.
        var consumed = ""

        init() throws {
            // posix_openpt/grantpt/unlockpt/ptsname are not exported by the Glibc module; their Linux
            // equivalents: open the multiplexer, unlock the slave (TIOCSPTLCK), ask its number (TIOCGPTN).
            master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
            var unlock: Int32 = 0
            var number: UInt32 = 0
            guard master >= 0, ioctl(master, 0x4004_5431 /* TIOCSPTLCK */, &unlock) == 0,
                ioctl(master, 0x8004_5430 /* TIOCGPTN */, &number) == 0
            else {
                throw POSIXError(.ENODEV)
            }
            slave = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY)
            guard slave >= 0 else { throw POSIXError(.ENODEV) }
        }

        deinit {
            close(master)
            close(slave)
        }

        func send(_ text: String) {
            _ = text.withCString { write(master, $0, strlen($0)) }
        }

        /// Reads until `text` has been received (after what was consumed before), or 20 s pass.
        @discardableResult
        func expect(_ text: String) -> Bool {
            let deadline = Date().addingTimeInterval(20)
            var buffer = [UInt8](repeating: 0, count: 4096)
            while Date() < deadline {
                if let found = received.range(of: text) {
                    consumed = String(received[..<found.lowerBound])
                    received = String(received[found.upperBound...])
                    return true
                }
                var p = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
                if poll(&p, 1, 100) > 0 {
                    let n = read(master, &buffer, buffer.count)
                    if n <= 0 { break }
                    received += String(decoding: buffer[0..<n], as: UTF8.self)
                }
            }
            return false
        }
    }

    @Test("Prompt, completion, a continued query, an error with its caret, history written at .quit")
    func session() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let history = directory.appendingPathComponent("history").path
        let pty = try PTY()
        let process = Process()
        process.executableURL = boardwalkExecutable
        process.arguments = ["repl", "--generated", "40"]
        process.environment = ["BOARDWALK_HISTORY": history, "TERM": "xterm", "NO_COLOR": "1"]
        let handle = FileHandle(fileDescriptor: pty.slave, closeOnDealloc: false)
        process.standardInput = handle
        process.standardOutput = handle
        process.standardError = handle
        try process.run()

        #expect(pty.expect("Type .help for help"))
        #expect(pty.expect("boardwalk> "))
        pty.send("sessions | cou\t")  // completes to `count` (the common prefix of count, count(), count_distinct()
        #expect(pty.expect("nt"))
        pty.send("\r")
        #expect(pty.expect("count\r\n-----\r\n"))
        #expect(pty.expect("boardwalk> "))
        pty.send("events |\r")
        #expect(pty.expect("...> "))
        pty.send("  count\r")
        #expect(pty.expect("count\r\n-----\r\n"))
        pty.send("events | bogus\r")
        #expect(pty.expect("error: unknown stage `bogus`"))
        #expect(pty.expect("^^^^^"))
        #expect(pty.expect("boardwalk> "))
        // Non-ASCII input reaches the query whole, even with no locale in the environment.
        pty.send("events | where name == \"café\" | bogus\r")
        let sawWholeWord = pty.expect("1 | events | where name == \"café\" | bogus")
        #expect(sawWholeWord, "\(pty.received)")
        #expect(pty.expect("boardwalk> "))
        pty.send(".quit\r")
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let saved = try String(contentsOfFile: history, encoding: .utf8)
        #expect(saved.contains("sessions\\040|\\040count"))
        #expect(saved.contains("events\\040|\\012\\040\\040count"))
    }

    @Test("Completion of an onboarding id typed with or without its quote; each word offered once")
    func completion() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let ids = SyntheticData(sessions: 40, seed: 1).onboardings.map(\.id)
        let id = ids[0]
        // The shortest prefix that only this id has.
        let prefix = try #require(
            (1...id.count).map { String(id.prefix($0)) }.first { p in ids.filter { $0.hasPrefix(p) }.count == 1 })
        let pty = try PTY()
        let process = Process()
        process.executableURL = boardwalkExecutable
        process.arguments = ["repl", "--generated", "40"]
        process.environment = [
            "BOARDWALK_HISTORY": directory.appendingPathComponent("history").path, "TERM": "xterm", "NO_COLOR": "1",
        ]
        let handle = FileHandle(fileDescriptor: pty.slave, closeOnDealloc: false)
        process.standardInput = handle
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        #expect(pty.expect("boardwalk> "))
        for typed in ["\"" + prefix, prefix] {
            pty.send("sessions | where onboarding == \(typed)\t")
            let completed = pty.expect(String(id.dropFirst(prefix.count)) + "\"")
            #expect(completed, "\(typed): \(pty.received)")
            pty.send(" | count\r")
            #expect(pty.expect("count\r\n-----\r\n"))
            #expect(pty.expect("boardwalk> "))
        }
        // Every candidate once: `placement` and `profile` are fields of events and of sessions.
        pty.send("sessions | stats p\t\t")
        #expect(pty.expect("percentile("))
        var listing = pty.consumed + "percentile("
        pty.send("\u{15}events | count\r")
        #expect(pty.expect("count\r\n-----\r\n"))
        listing += pty.consumed
        #expect(listing.components(separatedBy: "placement").count == 2, "\(listing)")
        #expect(listing.components(separatedBy: "profile").count == 2, "\(listing)")
        // By context: the event's session after `events | where`, the values of `exit` after `== "`.
        pty.send("\u{15}events | where session.comp\t")
        #expect(pty.expect("leted"), "\(pty.received)")
        pty.send("and session.exit == \"clo\t")
        #expect(pty.expect("sed\""), "\(pty.received)")
        pty.send(" | count\r")
        #expect(pty.expect("count\r\n-----\r\n"))
        #expect(pty.expect("boardwalk> "))
        pty.send("\u{15}.quit\r")
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }
}
