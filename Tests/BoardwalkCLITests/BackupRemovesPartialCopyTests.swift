import Foundation
import Testing

// A backup that fails part-way (a full disk; here a file size limit, which fails the same write with EFBIG) would
// leave DEST/data.mdb cut short: the next backup to DEST would refuse it ("already holds a store"), and `check` on it
// dies with a bus error on a full disk. The partial copy is removed, and DEST too when the backup made it.

@Suite("A backup that fails part-way removes what it made")
struct BackupRemovesPartialCopyTests {
    /// `boardwalk --db DB backup DEST` with writes limited to `blocks` 512-byte blocks (SIGXFSZ ignored, so the write
    /// past the limit fails with EFBIG instead of killing the process).
    func limitedBackup(db: String, to destination: String, blocks: Int) throws -> Execution {
        try run(
            tool: "/bin/bash",
            [
                "-c", "trap '' XFSZ; ulimit -f \(blocks); exec \"$0\" --db \"$1\" backup \"$2\"",
                boardwalkExecutable.path, db, destination,
            ])
    }

    @Test("the partial copy is removed, DEST too when the backup made it, and a later backup to DEST works")
    func partialCopyRemoved() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = dir.appendingPathComponent("db").path
        let fill = try boardwalk(
            ["ingest", "--db", db, "-q", "-"], stdin: try boardwalk(["generate", "-n", "200"]).stdout)
        #expect(fill.status == 0)
        let made = dir.appendingPathComponent("new-copy").path
        let failed = try limitedBackup(db: db, to: made, blocks: 100)
        #expect(failed.status == 1)
        #expect(failed.stderr.hasPrefix("Error: backup to '\(made)' failed: "))
        #expect(failed.stderr.hasSuffix("; the partial copy was removed\n"), "\(failed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: made))

        let empty = dir.appendingPathComponent("empty-copy")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: false)
        #expect(try limitedBackup(db: db, to: empty.path, blocks: 100).status == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: empty.path).isEmpty, "left as it was: empty")

        let again = try boardwalk(["backup", "--db", db, empty.path])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try boardwalk(["check", "--db", empty.path]).status == 0)
    }

    @Test("a data.mdb already in DEST is never removed")
    func existingStoreKept() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = dir.appendingPathComponent("db").path
        #expect(try boardwalk(["ingest", "--db", db, "-q", "-"], stdin: Corpus(sessions: 1, seed: 1).text).status == 0)
        let other = dir.appendingPathComponent("other")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: false)
        try Data("not mine to delete".utf8).write(to: other.appendingPathComponent("data.mdb"))
        let run = try boardwalk(["backup", "--db", db, other.path])
        #expect(run.status == 1)
        #expect(run.stderr.contains("already holds a store (data.mdb)"), "\(run.stderr)")
        #expect(!run.stderr.contains("removed"))
        #expect(
            try String(contentsOf: other.appendingPathComponent("data.mdb"), encoding: .utf8) == "not mine to delete")
    }
}
