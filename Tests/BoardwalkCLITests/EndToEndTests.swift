import BoardwalkCLI
import BoardwalkGenerator
import Foundation
import Testing

@Suite("boardwalk executable")
struct EndToEndTests {
    @Test("--help and --version print on stdout and exit 0")
    func toolHelp() throws {
        for arguments in [["--help"], ["-h"], ["help"]] {
            let r = try boardwalk(arguments)
            #expect(r.status == 0)
            #expect(r.stderr.isEmpty)
            #expect(r.stdout.hasPrefix("boardwalk: an event-log engine"))
            for command in BoardwalkCLI.commands { #expect(r.stdout.contains("  \(command.name) ")) }
        }
        let v = try boardwalk(["--version"])
        #expect(v.status == 0)
        #expect(v.stdout == "boardwalk \(BoardwalkCLI.version)\n")
    }

    @Test("Every command's --help", arguments: BoardwalkCLI.commands.map { $0.name })
    func commandHelp(name: String) throws {
        let command = try #require(BoardwalkCLI.commands.first { $0.name == name })
        for arguments in [[name, "--help"], [name, "-h"], ["help", name]] {
            let r = try boardwalk(arguments)
            #expect(r.status == 0)
            #expect(r.stderr.isEmpty)
            #expect(r.stdout.hasPrefix(command.summary + "\n\nUsage: " + command.usage + "\n"))
            for option in command.options { #expect(r.stdout.contains("--\(option.long)")) }
            #expect(r.stdout.contains("-h, --help"))
        }
    }

    @Test(
        "Usage errors exit 64 with Error/Usage/See on stderr",
        arguments: [
            (
                ["frobnicate"],
                "Error: unknown command 'frobnicate'\nUsage: boardwalk [--db DIR] <command> [options]\n  See 'boardwalk --help' for more information.\n"
            ),
            (
                ["--bogus"],
                "Error: unknown option '--bogus'\nUsage: boardwalk [--db DIR] <command> [options]\n  See 'boardwalk --help' for more information.\n"
            ),
            (
                [],
                "Error: missing command\nUsage: boardwalk [--db DIR] <command> [options]\n  See 'boardwalk --help' for more information.\n"
            ),
            (
                ["generate"],
                "Error: missing option '--sessions N'\nUsage: boardwalk generate --sessions N [--seed S] [--onboardings K] [--start TIME] [--days D] [--shape SHAPE]\n  See 'boardwalk generate --help' for more information.\n"
            ),
            (
                ["generate", "-n", "-3"],
                "Error: option '--sessions' must be between 0 and 100000000, got -3\nUsage: boardwalk generate --sessions N [--seed S] [--onboardings K] [--start TIME] [--days D] [--shape SHAPE]\n  See 'boardwalk generate --help' for more information.\n"
            ),
            (
                ["generate", "-n", "3", "--shape", "round"],
                "Error: option '--shape' must be one of mixed, wire, docs-camel, docs-snake, bridge, got 'round'\nUsage: boardwalk generate --sessions N [--seed S] [--onboardings K] [--start TIME] [--days D] [--shape SHAPE]\n  See 'boardwalk generate --help' for more information.\n"
            ),
            (
                ["generate", "-n", "3", "extra"],
                "Error: unexpected argument 'extra'\nUsage: boardwalk generate --sessions N [--seed S] [--onboardings K] [--start TIME] [--days D] [--shape SHAPE]\n  See 'boardwalk generate --help' for more information.\n"
            ),
            (
                ["--db", "x", "generate", "-n", "1"],
                "Error: 'generate' does not use a store (--db)\nUsage: boardwalk generate --sessions N [--seed S] [--onboardings K] [--start TIME] [--days D] [--shape SHAPE]\n  See 'boardwalk generate --help' for more information.\n"
            ),
            (
                ["stats", "--format"],
                "Error: option '--format' needs a value (FORMAT)\nUsage: boardwalk stats [--db DIR] [--format table|json]\n  See 'boardwalk stats --help' for more information.\n"
            ),
        ])
    func usageErrors(arguments: [String], stderr: String) throws {
        let r = try boardwalk(arguments)
        #expect(r.status == 64)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr == stderr)
    }

    @Test("generate is deterministic per seed and writes one JSON object per line")
    func generate() throws {
        let a = try boardwalk(["generate", "--sessions", "40", "--seed", "9"])
        let b = try boardwalk(["generate", "-n", "40", "-s", "9"])
        let c = try boardwalk(["generate", "--sessions=40", "--seed=10"])
        #expect(a.status == 0 && a.stderr.isEmpty)
        #expect(a.stdout == b.stdout)
        #expect(a.stdout != c.stdout)
        let lines = a.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.last == "")
        let expectedCount = Array(SyntheticData(sessions: 40, seed: 9).events())
        #expect(lines.count - 1 == expectedCount.count)
        for line in lines.dropLast() {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
            #expect(object is [String: Any])
        }
        let empty = try boardwalk(["generate", "--sessions", "0"])
        #expect(empty.status == 0 && empty.stdout.isEmpty)
    }

    @Test("generate --shape forces one message shape")
    func generateShape() throws {
        let wire = try boardwalk(["generate", "-n", "20", "--shape", "wire"])
        #expect(wire.status == 0)
        for line in wire.stdout.split(separator: "\n") {
            // Errors have no wire `type`; every other line does.
            #expect(line.contains("\"type\":") || line.contains("\"kind\":\"error\""))
        }
    }
}
