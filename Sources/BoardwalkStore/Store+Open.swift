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
    static func prepareDirectory(_ path: String, options: Options) throws {
        var st = stat()
        if stat(path, &st) != 0 {
            guard options.create, !options.readOnly else {
                throw StoreError(.notAStore, "\(path) does not exist")
            }
            try makeDirectory(path)
            return
        }
        guard st.st_mode & S_IFMT == S_IFDIR else { throw StoreError(.notAStore, "\(path) is not a directory") }
        var dataStat = stat()
        if stat(path + "/data.mdb", &dataStat) == 0 { return }
        // A directory without data.mdb: only an empty one may become a store.
        if try entries(of: path).contains(where: { $0 != "lock.mdb" }) {
            throw StoreError(.notAStore, "\(path) is a non-empty directory that holds no Boardwalk store")
        }
        if options.readOnly { throw StoreError(.notAStore, "\(path) holds no Boardwalk store") }
    }

    /// Refuses a data file shorter than its last committed page: a read of a page past the end of a mapped file
    /// is a bus error, not an error LMDB could return (every command, `check` included, died on a cut-short copy).
    static func checkFileSize(_ env: Environment, path: String) throws {
        var info = MDB_envinfo()
        mdb_env_info(env.handle, &info)
        var st = stat()
        guard stat(path + "/data.mdb", &st) == 0 else { return }
        // In pages, unsigned: a damaged last page number near 2⁶⁴ overflowed (last + 1) · page size (a trap at open).
        let lastPage = UInt64(UInt(bitPattern: info.me_last_pgno)), pages = UInt64(st.st_size) / UInt64(env.pageSize)
        if lastPage >= pages {
            throw StoreError(
                .corrupt,
                "\(path)/data.mdb is \(st.st_size) bytes, but its last committed page is page "
                    + "\(lastPage) of \(env.pageSize) bytes: the file was cut short (a partial copy?) or its meta "
                    + "page is damaged; restore it from a backup")
        }
    }

    /// The names in directory `path`, without `.` and `..`.
    static func entries(of path: String) throws -> [String] {
        guard let dir = opendir(path) else { throw StoreError.system(errno, context: "opendir(\(path))") }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    static func makeDirectory(_ path: String) throws {
        if mkdir(path, 0o755) != 0 && errno != EEXIST {
            let code = errno
            let why =
                code == ENOENT
                ? "its parent directory does not exist"
                : code == EACCES
                    ? "permission denied"
                    : String(
                        decoding: Array(
                            UnsafeRawBufferPointer(
                                start: strerror(code),
                                count: strlen(strerror(code)))), as: UTF8.self)
            throw StoreError(.invalidArgument, "cannot create the directory \(path): \(why)")
        }
    }

    static func canonicalPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    static func openDatabases(_ env: Environment, path: String) throws -> Databases {
        // Converting a store of the format before writes to it, and may fill the map: grown, the open runs again.
        while true {
            do {
                return try openDatabasesOnce(env, path: path)
            } catch let error as StoreError where error.isMapFull {
                try env.grow()
            }
        }
    }

    private static func openDatabasesOnce(_ env: Environment, path: String) throws -> Databases {
        try env.transaction(write: !env.isReadOnly) { txn in
            if let meta = try txn.open(Layout.meta, create: false) {
                let format = try Layout.storedFormat(txn, meta, path: path)
                guard format <= Layout.formatVersion else {
                    throw StoreError(
                        .newerFormat(found: format, supported: Layout.formatVersion),
                        "\(path) has store format \(format); this Boardwalk reads format \(Layout.formatVersion)")
                }
                if format == Layout.formatVersion - 1, txn.isWrite { return try addBlockHeads(txn, path: path) }
                guard format == Layout.formatVersion else {
                    throw StoreError(
                        .olderFormat(found: format, supported: Layout.formatVersion),
                        format == Layout.formatVersion - 1
                            ? "\(path) has store format \(format) (\(Layout.formerLayout(of: format))); this Boardwalk converts it in place the first time it opens it for writing, which a read-only open cannot do: run `boardwalk ingest --db \(path) /dev/null` once (it adds the copy of the headers and stores nothing else)"
                            : "\(path) has store format \(format) (\(Layout.formerLayout(of: format))), which this Boardwalk no longer reads; convert it by exporting it with the Boardwalk that wrote it (`boardwalk export --db \(path) --format batch --output events.batch`) and ingesting that file with this one into a new store (`boardwalk ingest --db NEW events.batch`), or re-import the original input"
                    )
                }
                return try openAll(txn, path: path) { _ in false }
            }
            guard txn.isWrite else { throw StoreError(.notAStore, "\(path) holds no Boardwalk store") }
            guard try txn.mainEntries() == 0 else {
                throw StoreError(.notAStore, "\(path) is an LMDB environment but not a Boardwalk store")
            }
            let dbs = try openAll(txn, path: path) { _ in true }
            try txn.putUInt32(dbs.meta, Layout.metaFormat, Layout.formatVersion)
            return dbs
        }
    }

    /// Every database of ``Layout/all``, those for which `creates` says so made where missing (in a write
    /// transaction).
    /// - Throws: ``StoreError`` with ``StoreError/Kind/notAStore`` naming the first database missing.
    private static func openAll(_ txn: Transaction, path: String, creates: (String) -> Bool) throws -> Databases {
        var handles: [String: Database] = [:]
        for name in Layout.all {
            guard let db = try txn.open(name, create: creates(name)) else {
                throw StoreError(.notAStore, "\(path) lacks the '\(name)' database")
            }
            handles[name] = db
        }
        return Databases(handles)
    }

    /// Converts a store of the format before this one in place, inside the opening write transaction: it adds
    /// `block_heads`, the head of every block of `events` (format 13 lacked it), and records the new format. A
    /// killed process leaves the store as it was (the transaction is not committed).
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` for a block whose header does not decode (the store
    ///   is left at its format: salvage it with the Boardwalk that wrote it).
    /// - Complexity: O(blocks), a put per block; every block's first page is read.
    private static func addBlockHeads(_ txn: Transaction, path: String) throws -> Databases {
        let dbs = try openAll(txn, path: path) { $0 == Layout.blockHeads }
        try txn.withCursor(dbs.events) { c in
            try txn.withCursor(dbs.blockHeads) { heads in
                var found = try c.first()
                while found {
                    let key = try decodeBlockKey(c.key)
                    let header = try blockHeader(key, c.value)
                    _ = try heads.put(c.key, UnsafeRawBufferPointer(rebasing: c.value[..<header.eventsStart]))
                    found = try c.next()
                }
            }
        }
        try txn.putUInt32(dbs.meta, Layout.metaFormat, Layout.formatVersion)
        return dbs
    }
}

extension Transaction {
    /// Entries in the unnamed (main) database, where LMDB lists named databases.
    func mainEntries() throws -> Int {
        var dbi: MDB_dbi = 0
        try check(mdb_dbi_open(handle, nil, 0, &dbi), "mdb_dbi_open(main)")
        var stat = MDB_stat()
        try check(mdb_stat(handle, dbi, &stat), "mdb_stat(main)")
        return stat.ms_entries
    }
}
