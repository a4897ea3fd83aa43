import BoardwalkCodec
import BoardwalkModel
internal import CLMDB
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension Store {
    /// Copies the store, compacted, into `directory` while writers keep running. `directory` must not exist
    /// (its parent must) or be an empty directory. Wraps `mdb_env_copy2` with `MDB_CP_COMPACT`.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/invalidArgument`` when `directory` is a file, or a directory
    ///   that holds anything (a store, or any other file: nothing in it is overwritten or mixed with the copy), or
    ///   cannot be created; ``StoreError/Kind/corrupt`` when LMDB's own pages are damaged (checked first, as
    ///   `check()` does: liblmdb's compacting copy follows them unchecked and can crash on them), or when a block's
    ///   checksum does not match (checked next: the copy would carry the change on, unseen);
    ///   ``StoreError/Kind/closed`` after ``close()``; ``StoreError/Kind/system`` (the disk) or
    ///   ``StoreError/Kind/lmdb``.
    /// - Complexity: O(size of the store), three times: the page check, the blocks' checksums, then the copy, which
    ///   holds one read transaction.
    public func backup(to directory: String) throws {
        try backup(to: directory, stopWhen: nil)
    }

    /// ``backup(to:)``, asking `shouldStop` every 10 ms while the copy runs: when it returns `true`, the copy stops at
    /// its next write, the partial `data.mdb` is removed (and `directory`, when this call made it and it is empty),
    /// and the call throws ``StoreError/Kind/stopped``. For a command that must end cleanly on a signal: the copy runs
    /// on a thread of its own (which blocks every signal), while the calling thread watches `shouldStop`.
    ///
    /// Wraps `mdb_env_copyfd2` with `MDB_CP_COMPACT` on a file this call creates; to stop it, the file's descriptor is
    /// replaced (`dup2`) by one that cannot be written, so that liblmdb's next write fails and the copy returns.
    /// - Throws: as ``backup(to:)``, and ``StoreError/Kind/stopped``.
    public func backup(to directory: String, stopWhen shouldStop: (() -> Bool)?) throws {
        try checkOpen()
        // liblmdb's compacting copy follows damaged pages unchecked and crashes on them (one of `event_log` did).
        // Pages are never damaged by a commit, so a check in an earlier snapshot covers the copy's.
        guard let problems = try readRetryingPagesMoved({ try $0.txn.checkPages() }) else {
            throw StoreError(
                .corrupt,
                "LMDB's pages could not be checked before the backup: another process committed faster "
                    + "than the check could read them, 100 times; try again when appends pause")
        }
        if !problems.isEmpty {
            throw StoreError(
                .corrupt,
                "LMDB's own pages of the store are damaged, and copying them could crash the process: "
                    + problems.prefix(3).joined(separator: "; ")
                    + (problems.count > 3 ? "; …" : "")
                    + ". `boardwalk check` lists them; `boardwalk export --salvage` "
                    + "reads what can still be read")
        }
        // A copy of changed bytes would look whole: the blocks' checksums first. A damaged block marks the store
        // (the read does) and ends the backup with where it is.
        _ = try read { snapshot in try snapshot.checkBlockChecksums() }
        // LMDB would refuse a data.mdb with a bare "File exists", and copy beside anything else.
        if access(directory + "/data.mdb", F_OK) == 0 {
            throw StoreError(
                .invalidArgument, "\(directory) already holds a store (data.mdb): back up into a new or empty directory"
            )
        }
        var st = stat()
        if stat(directory, &st) == 0 {
            guard st.st_mode & S_IFMT == S_IFDIR else {
                throw StoreError(
                    .invalidArgument, "\(directory) is not a directory: back up into a new or empty directory")
            }
            let names = try Store.entries(of: directory)
            if !names.isEmpty {
                let shown = names.sorted().prefix(3).joined(separator: ", ") + (names.count > 3 ? ", …" : "")
                throw StoreError(
                    .invalidArgument,
                    "\(directory) is not empty (it holds \(shown)): back up into a new or empty directory")
            }
        }
        let made = access(directory, F_OK) != 0
        try Store.makeDirectory(directory)
        guard let shouldStop else {
            try env.copy(to: directory)
            return
        }
        try copyStopping(to: directory, madeDirectory: made, shouldStop)
    }

    /// The copy of ``backup(to:stopWhen:)`` on a thread of its own, watched by the calling thread.
    private func copyStopping(to directory: String, madeDirectory: Bool, _ shouldStop: () -> Bool) throws {
        let path = directory + "/data.mdb"
        // As mdb_env_copy2 makes it.
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else { throw StoreError.system(errno, context: "cannot create \(path)") }
        /// The copy's result, set by its thread when it ends.
        final class Outcome: Sendable {
            let result = Mutex<Result<Void, StoreError>?>(nil)
        }
        let outcome = Outcome()
        let env = self.env
        let thread = try BackupThread.start {
            let result: Result<Void, StoreError>
            do {
                try env.copy(toDescriptor: descriptor, path: path)
                result = .success(())
            } catch let error as StoreError {
                result = .failure(error)
            } catch {
                result = .failure(StoreError(.system, "\(error)"))
            }
            outcome.result.withLock { $0 = result }
        }
        var stopped = false
        while outcome.result.withLock({ $0 == nil }) {
            if !stopped && shouldStop() {
                // lmdb.h has no way to cancel a copy; a write to a read-only descriptor fails (EBADF), and liblmdb
                // ends the copy with that error at its next write.
                let unwritable = Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC)
                if unwritable >= 0 {
                    dup2(unwritable, descriptor)
                    Glibc.close(unwritable)
                    stopped = true
                }
            }
            usleep(10_000)
        }
        pthread_join(thread, nil)
        Glibc.close(descriptor)
        let result = outcome.result.withLock { $0 } ?? .success(())
        // A stop asked for while the copy was finishing (between two looks) stops the backup too: the command was
        // told to stop before it returned, and its caller expects nothing left behind.
        if !stopped && shouldStop() { stopped = true }
        if stopped {
            unlink(path)
            if madeDirectory { rmdir(directory) }
            throw StoreError(
                .stopped, "the backup to \(directory) was stopped before it was done; its partial copy was removed")
        }
        try result.get()
    }
}

/// The thread of a backup that can be stopped (``Store/backup(to:stopWhen:)``).
private enum BackupThread {
    /// Starts `body` on a new thread that blocks every signal (and so does liblmdb's writer thread, which inherits
    /// its mask), so that a signal reaches the thread that watches.
    static func start(_ body: @escaping @Sendable () -> Void) throws -> pthread_t {
        final class Box: Sendable {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        var thread = pthread_t()
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        var all = sigset_t(), previous = sigset_t()
        sigfillset(&all)
        pthread_sigmask(SIG_BLOCK, &all, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        let status = pthread_create(
            &thread, nil,
            { context in
                Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
                return nil
            }, context)
        guard status == 0 else {
            Unmanaged<Box>.fromOpaque(context).release()
            throw StoreError.system(status, context: "cannot start the backup's thread")
        }
        return thread
    }
}
