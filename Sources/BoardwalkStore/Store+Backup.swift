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
        try Store.makeDirectory(directory)
        try env.copy(to: directory)
    }
}
