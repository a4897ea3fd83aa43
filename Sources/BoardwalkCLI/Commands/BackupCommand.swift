import Boardwalk

#if canImport(Glibc)
    import Glibc
#endif

enum BackupCommand: Command {
    static let name = "backup"
    static let summary = "Write a compacted copy of the store while it stays in use"
    static let usage = "boardwalk backup [--db DIR] DEST"
    static let options = [databaseOption]
    static let discussion = """
        DEST must not exist, or be an empty directory. Writers may keep appending while the copy is made;
        the copy is the store as of the moment the backup began. The copy is itself a store: use it with
        --db DEST. Ctrl-C or SIGTERM stops it and removes the partial copy (and DEST, when the backup made it):
        run the command again to back up. A SIGINT ignored by the shell that started it (a background job)
        stays ignored.

        Example:
          boardwalk backup /backups/boardwalk-$(date +%F)

        """

    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws -> Int32 {
        guard arguments.positionals.count == 1, let destination = arguments.positionals.first else {
            throw UsageError(arguments.positionals.isEmpty ? "missing DEST" : "give one DEST")
        }
        if destination.isEmpty { throw UsageError("DEST is an empty string: name the directory to back up into") }
        // Before the copy is begun, so that no signal finds a partial copy without its handler.
        installStopHandlers()
        let store = try openStore(invocation.database(arguments), readOnly: true, notes: invocation)
        // The store makes DEST, not its parents: say so rather than pass on mkdir's errno as a store error.
        let parent = parentDirectory(of: destination)
        var st = stat()
        if stat(parent, &st) != 0, errno == ENOENT {
            throw RuntimeError("backup to '\(destination)' failed: the directory '\(parent)' does not exist")
        }
        let start = monotonicMicroseconds()
        // A copy that fails part-way (a full disk, a file size limit) leaves a cut-short data.mdb that looks like a
        // store, makes the next backup to DEST refuse it, and crashed `check` when opened: remove what this run made
        // (never a data.mdb that was there before, which the store refuses to overwrite anyway).
        let copy = destination + "/data.mdb"
        let destinationExisted = access(destination, F_OK) == 0
        let copyExisted = access(copy, F_OK) == 0
        do {
            try store.backup(to: destination, stopWhen: { interruptFlag.isCancelled })
        } catch let error as StoreError where error.kind == .stopped {
            invocation.err(
                "interrupted: the backup to '\(destination)' was stopped and its partial copy removed; run the same "
                    + "command again to back up\n")
            return stoppedStatus()
        } catch {
            var cleaned = ""
            if !copyExisted, access(copy, F_OK) == 0 {
                cleaned = unlink(copy) == 0 ? "; the partial copy was removed" : "; remove the partial copy '\(copy)'"
            }
            if !destinationExisted { _ = rmdir(destination) }  // only when empty
            throw RuntimeError("backup to '\(destination)' failed: \(error)\(cleaned)")
        }
        invocation.out(
            "backed up \(store.path) to \(destination) in \(Units.duration(microseconds: monotonicMicroseconds() - start))\n"
        )
        return ExitCode.success
    }
}

/// The directory that holds `path` (`.` for a bare name, `/` for an entry of the root), ignoring trailing slashes.
func parentDirectory(of path: String) -> String {
    var path = Substring(path)
    while path.count > 1, path.hasSuffix("/") { path = path.dropLast() }
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return slash == path.startIndex ? "/" : String(path[..<slash])
}
