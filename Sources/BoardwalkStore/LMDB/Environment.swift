internal import CLMDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An open LMDB environment (`MDB_env`): one directory holding `data.mdb` and `lock.mdb`.
///
/// Every transaction of the process runs inside ``gate`` in shared mode; changing the map size takes it
/// in exclusive mode. lmdb.h on `mdb_env_set_mapsize`: "It may be called at later times if no
/// transactions are active in this process. Note that the library does not check for this condition,
/// the caller must ensure it explicitly."
///
/// `@unchecked Sendable`: the `MDB_env` handle may be used from any thread (it is opened with
/// `MDB_NOTLS`, so read transactions are not tied to threads); the only mutable state, the map size,
/// changes only under the exclusive gate, and ``isClosed`` only under the exclusive gate too. Write
/// transactions are additionally serialized by LMDB's writer mutex.
final class Environment: @unchecked Sendable {
    let handle: OpaquePointer
    let path: String
    let isReadOnly: Bool
    /// Opened with `MDB_NOLOCK` because the lock file could not be opened for writing (read-only only).
    let isLockless: Bool
    /// Whether transactions read LMDB's pages themselves (``MappedFile/readsPages``).
    let readsPages: Bool
    private let gate: UnsafeMutablePointer<pthread_rwlock_t>
    /// Guarded by `gate`: read under shared, written under exclusive.
    private var isClosed = false
    /// Where data.mdb is mapped (0: not known, values are then not checked); found in `/proc/self/maps` after
    /// the map is made or moved (`mdb_env_info` gives no address without `MDB_FIXEDMAP`). Guarded by `gate`.
    private(set) var mapBase: UInt = 0
    /// What this process did with each window of the current map (``MapWindows``); replaced with the map.
    /// Guarded by `gate`.
    private(set) var windows: MapWindows? = nil

    /// Opens (creating if needed) the environment in directory `path`, which must exist.
    ///
    /// Read-only, a store whose lock file this process may not open for writing (another user's store, a copy
    /// on read-only media: `EACCES`, `EPERM` or `EROFS`) is opened again with `MDB_NOLOCK`: its readers are then
    /// not registered in the lock file, so a writer in another process could reuse pages they still read
    /// (``isLockless``).
    ///
    /// Wraps `mdb_env_create`, `mdb_env_set_mapsize`, `mdb_env_set_maxdbs`, `mdb_env_open` and
    /// `mdb_reader_check`.
    /// `readsPages` allows the page readers; they run only on a liblmdb whose page layout ``PageLayout`` knows.
    init(
        path: String, mapSize: Int, maxDatabases: UInt32, flags: UInt32, readOnly: Bool,
        readsPages: Bool = true
    ) throws {
        var env: OpaquePointer
        var lockless = false
        do {
            env = try Environment.open(
                path: path, mapSize: mapSize, maxDatabases: maxDatabases, flags: flags,
                readOnly: readOnly)
        } catch let error as StoreError
            where readOnly && [.permissionDenied, .notPermitted, .readOnlyFileSystem].contains(error.errno)
        {
            // LMDB opens lock.mdb for reading and writing even for a read-only environment (a reader takes a
            // slot in it). Without write access to it there is no slot to take: read without one, but only while no
            // other process has the store open. A writer that cannot see this reader reuses pages it is reading, and
            // liblmdb then asserts (23 of 30 queries aborted while the owner appended).
            if let holder = Environment.lockHolder(path) {
                throw StoreError(
                    .readOnly,
                    "\(path) is open in another process (pid \(holder)), and this user may not "
                        + "write its lock file: reading it without one while it is written could crash or "
                        + "give wrong results; get write access to \(path)/lock.mdb, or read a copy "
                        + "(`boardwalk backup` by its owner)", underlying: error)
            }
            env = try Environment.open(
                path: path, mapSize: mapSize, maxDatabases: maxDatabases,
                flags: flags | UInt32(MDB_NOLOCK), readOnly: true)
            lockless = true
        }
        // On a read-only file system liblmdb itself opens a read-only environment without the lock file.
        if readOnly && !lockless {
            var fs = statvfs()
            if statvfs(path, &fs) == 0, fs.f_flag & UInt(ST_RDONLY) != 0 { lockless = true }
        }
        handle = env
        self.path = path
        isReadOnly = readOnly
        isLockless = lockless
        self.readsPages = readsPages && PageLayout.linkedIsKnown
        gate = .allocate(capacity: 1)
        pthread_rwlock_init(gate, nil)
        var stat = MDB_stat()
        mdb_env_stat(env, &stat)
        pageSize = Int(stat.ms_psize)
        mapBase = Environment.findMapBase(env)
        // The map's size now (liblmdb maps at least the file), not the size asked for.
        windows = mapBase == 0 ? nil : MapWindows(mapSize: self.mapSize)
    }

    /// The reader slots asked of liblmdb for a lock file this process creates or opens alone: what a server with
    /// many clients needs (each open `read { }` or running query holds one), at 64 bytes a slot (a 64 KiB lock
    /// file). liblmdb's default, 126, let a busy server lock out its own writer (`MDB_READERS_FULL` on ingest).
    static let maxReaders: UInt32 = 1024

    /// The slots of the reader table as liblmdb uses it (`mdb_env_get_maxreaders`): ``maxReaders``, or what the lock
    /// file held when another process had it open (126 for one an older Boardwalk made).
    var maxReaders: Int {
        var n: UInt32 = 0
        mdb_env_get_maxreaders(handle, &n)
        return Int(n)
    }

    /// The process that has the environment in `path` open, if any: every process with it open holds a shared
    /// `fcntl` lock on byte 0 of `lock.mdb` (liblmdb's `mdb_env_setup_locks`), which `F_GETLK` reports even through
    /// a descriptor opened read-only. Nil when there is no lock file or nobody holds the lock.
    private static func lockHolder(_ path: String) -> pid_t? {
        let fd = Glibc.open(path + "/lock.mdb", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        var lock = Glibc.flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 0
        lock.l_len = 1
        guard fcntl(fd, F_GETLK, &lock) == 0, lock.l_type != Int16(F_UNLCK) else { return nil }
        return lock.l_pid
    }

    /// `mdb_env_create` … `mdb_env_open` and `mdb_reader_check`; the handle is closed again when any of them fails.
    private static func open(path: String, mapSize: Int, maxDatabases: UInt32, flags: UInt32, readOnly: Bool) throws
        -> OpaquePointer
    {
        var env: OpaquePointer?
        try check(mdb_env_create(&env), "mdb_env_create")
        guard let env else { throw StoreError(lmdbCode: ENOMEM, context: "mdb_env_create") }
        do {
            try check(mdb_env_set_mapsize(env, mapSize), "mdb_env_set_mapsize")
            try check(mdb_env_set_maxdbs(env, maxDatabases), "mdb_env_set_maxdbs")
            // lmdb.h: "This defines the number of slots in the lock table", "only ... before mdb_env_open()". liblmdb
            // sizes a lock file to it only when it opens the file alone (holding its exclusive lock); an opener of a
            // file another process has open adopts that file's size, so all processes agree on the table.
            try check(mdb_env_set_maxreaders(env, Environment.maxReaders), "mdb_env_set_maxreaders")
            // MDB_NOTLS: without it a second read transaction on one thread fails with MDB_BAD_RSLOT,
            // and a read transaction could not be ended on another thread than the one that began it.
            var openFlags = flags | UInt32(MDB_NOTLS)
            if readOnly { openFlags |= UInt32(MDB_RDONLY) }
            if openFlags & UInt32(MDB_NOLOCK) == 0 { try reserveLockFile(path) }
            try check(mdb_env_open(env, path, openFlags, 0o644), "mdb_env_open(\(path))")
            // liblmdb grew a lock file it opened alone to the table asked for with `ftruncate`, leaving holes:
            // their blocks are reserved now (the size is liblmdb's, so nothing any process maps changes).
            if openFlags & UInt32(MDB_NOLOCK) == 0 { try reserveOpenLockFile(path) }
            // Clear reader slots left by processes that died inside a read transaction; they would
            // otherwise pin old pages forever and make the file grow. (Nothing to clear without a lock file.)
            var dead: Int32 = 0
            try check(mdb_reader_check(env, &dead), "mdb_reader_check")
        } catch {
            mdb_env_close(env)
            throw error
        }
        return env
    }

    /// Gives `lock.mdb` its disk blocks before liblmdb opens it. liblmdb sizes a new (or short) lock file with
    /// `ftruncate`, which allocates nothing, and then writes it through a memory map: on a full disk that first
    /// write is a SIGBUS (`stats` on a store copied without its lock file to a full file system died so).
    /// `posix_fallocate` of the file's own length, or of 8 KiB for a new one (`sizeof(MDB_txninfo)` 192 + 125 reader
    /// slots of 64), turns that into `ENOSPC` here. The length is never extended past that: a process that has the
    /// file open reads its length as its reader table, and one that mapped the shorter file would then write its
    /// slot past its map (liblmdb itself grows the file only when it opens it alone). Filling the holes of a file in use changes none of its
    /// bytes, and a lock file whose blocks are all there needs no space at all. Nothing is done when the file cannot
    /// be opened for writing (a read-only store: liblmdb then reads without a lock file, or fails by itself).
    ///
    /// Closing a descriptor of `lock.mdb` drops every `fcntl` lock this process holds on it; this runs before
    /// liblmdb takes any, and a process opens a store once (``StoreError/Kind/alreadyOpen``).
    private static func reserveLockFile(_ path: String) throws {
        let fd = Glibc.open(path + "/lock.mdb", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        defer { Glibc.close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return }
        let rc = posix_fallocate(fd, 0, max(st.st_size, 8 << 10))
        // EOPNOTSUPP/EINVAL: a file system without fallocate; liblmdb's own sizing then applies.
        guard rc == 0 || rc == EOPNOTSUPP || rc == EINVAL else {
            throw StoreError(lmdbCode: rc, context: "posix_fallocate(\(path)/lock.mdb): reserving the lock file")
        }
    }

    /// Reserves the blocks of `lock.mdb` as liblmdb sized it in `mdb_env_open`, through liblmdb's own descriptor of
    /// it (found in `/proc/self/fd`): opening and closing another descriptor of the file would drop the `fcntl`
    /// locks liblmdb holds on it, and another process could then take the file as its own and reset the reader
    /// table under this one's readers. Nothing is done when the descriptor is not found.
    private static func reserveOpenLockFile(_ path: String) throws {
        guard let target = realpath(path + "/lock.mdb", nil) else { return }
        defer { free(target) }
        let wanted = String(cString: target)
        guard let dir = opendir("/proc/self/fd") else { return }
        defer { closedir(dir) }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard let fd = Int32(name) else { continue }
            let n = readlink("/proc/self/fd/" + name, &buffer, buffer.count)
            guard n > 0 else { continue }
            let link = buffer.withUnsafeBytes { String(decoding: $0.prefix(n), as: UTF8.self) }
            guard link == wanted else { continue }
            var st = stat()
            guard fstat(fd, &st) == 0, st.st_size > 0 else { return }
            let rc = posix_fallocate(fd, 0, st.st_size)
            guard rc == 0 || rc == EOPNOTSUPP || rc == EINVAL || rc == EBADF else {
                throw StoreError(lmdbCode: rc, context: "posix_fallocate(\(path)/lock.mdb): reserving the lock file")
            }
            return
        }
    }

    /// The start of data.mdb's mapping in this process, from `/proc/self/maps` (the mapping of the file's device
    /// and inode at offset 0); 0 when it cannot be found.
    private static func findMapBase(_ env: OpaquePointer) -> UInt {
        var fd: Int32 = -1
        var st = stat()
        guard mdb_env_get_fd(env, &fd) == 0, fstat(fd, &st) == 0,
            let maps = fopen("/proc/self/maps", "r")
        else { return 0 }
        defer { fclose(maps) }
        // glibc's encoding of a device number (gnu_dev_major/gnu_dev_minor, macros Swift does not import).
        let dev = UInt64(st.st_dev)
        let device =
            String((dev >> 8) & 0xFFF | (dev >> 32) & ~0xFFF, radix: 16) + ":"
            + String((dev & 0xFF) | (dev >> 12) & ~0xFF, radix: 16)
        var line = [CChar](repeating: 0, count: 4096)
        while fgets(&line, Int32(line.count), maps) != nil {
            // Only lines naming a data.mdb are parsed (a process maps a few hundred files; parsing each in Swift
            // cost 6 M instructions, 2 % of a one-onboarding query).
            guard strstr(line, "data.mdb") != nil else { continue }
            // start-end perms offset major:minor inode path (major and minor in hex, at least two digits)
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let fields = text.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 5, UInt(fields[4]) == UInt(st.st_ino), UInt(fields[2], radix: 16) == 0 else {
                continue
            }
            let numbers = fields[3].split(separator: ":").map { UInt64($0, radix: 16) }
            guard numbers.count == 2, let major = numbers[0], let minor = numbers[1],
                String(major, radix: 16) + ":" + String(minor, radix: 16) == device,
                let range = fields[0].split(separator: "-").first, let start = UInt(range, radix: 16)
            else { continue }
            return start
        }
        return 0
    }

    deinit {
        close()
        pthread_rwlock_destroy(gate)
        gate.deallocate()
    }

    /// Closes the environment after every running transaction of the process has ended.
    /// Wraps `mdb_env_close`. Later transactions throw ``StoreError/Kind/closed``.
    func close() {
        pthread_rwlock_wrlock(gate)
        defer { pthread_rwlock_unlock(gate) }
        if !isClosed {
            isClosed = true
            mdb_env_close(handle)
        }
    }

    /// The error of a use after ``close()`` (LMDB itself would answer `EINVAL`, or read freed memory).
    func closedError() -> StoreError {
        StoreError(.closed, "the store at \(path) is closed: open it again with Store.open")
    }

    /// Runs `body` with the handle unless the environment is closed (then `nil`): for `mdb_env_info` and the like,
    /// which have no way to refuse a closed handle. Takes the gate shared, so it must not run under the exclusive gate.
    func ifOpen<R>(_ body: (OpaquePointer) -> R) -> R? {
        pthread_rwlock_rdlock(gate)
        defer { pthread_rwlock_unlock(gate) }
        return isClosed ? nil : body(handle)
    }

    /// The current map size in bytes (`mdb_env_info`). Only while open: under the gate, or where `close` cannot run.
    var mapSize: Int {
        var info = MDB_envinfo()
        mdb_env_info(handle, &info)
        return info.me_mapsize
    }

    /// The database page size in bytes (`mdb_env_stat` at open; it never changes).
    let pageSize: Int

    /// Grows the map after `MDB_MAP_FULL`: doubles it up to 1 GiB, then adds 1 GiB at a time.
    /// Waits until no transaction of the process is running. Wraps `mdb_env_set_mapsize`.
    func grow() throws {
        pthread_rwlock_wrlock(gate)
        defer { pthread_rwlock_unlock(gate) }
        guard !isClosed else { throw closedError() }
        let current = mapSize
        let next = current < 1 << 30 ? current * 2 : current + (1 << 30)
        try check(mdb_env_set_mapsize(handle, next), "mdb_env_set_mapsize(\(next))")
        mapBase = Environment.findMapBase(handle)
        windows = mapBase == 0 ? nil : MapWindows(mapSize: mapSize)
    }

    /// Adopts the map size another process set (after `MDB_MAP_RESIZED`): `mdb_env_set_mapsize(env, 0)`.
    private func adoptMapSize() throws {
        pthread_rwlock_wrlock(gate)
        defer { pthread_rwlock_unlock(gate) }
        guard !isClosed else { throw closedError() }
        try check(mdb_env_set_mapsize(handle, 0), "mdb_env_set_mapsize(0)")
        mapBase = Environment.findMapBase(handle)
        windows = mapBase == 0 ? nil : MapWindows(mapSize: mapSize)
    }

    /// Runs `body` in a transaction and commits it when `body` returns; aborts it when `body` throws and
    /// rethrows that error. Does not retry on `MDB_MAP_FULL`: the caller grows and redoes its work, since
    /// only it knows how to undo its in-memory effects.
    ///
    /// Wraps `mdb_txn_begin`, `mdb_txn_commit` and `mdb_txn_abort`. `body` runs on the calling thread
    /// and cannot escape: lmdb.h, "A transaction and its cursors must only be used by a single thread".
    func transaction<R>(write: Bool, _ body: (Transaction) throws -> R) throws -> R {
        while true {
            pthread_rwlock_rdlock(gate)
            if isClosed {
                pthread_rwlock_unlock(gate)
                throw closedError()
            }
            var txn: OpaquePointer?
            let rc = mdb_txn_begin(handle, nil, write ? 0 : UInt32(MDB_RDONLY), &txn)
            if rc == MDB_MAP_RESIZED {
                // Another process grew the map; adopt its size with no transaction of ours running.
                pthread_rwlock_unlock(gate)
                try adoptMapSize()
                continue
            }
            defer { pthread_rwlock_unlock(gate) }
            if rc == MDB_READERS_FULL {
                var error = StoreError(
                    lmdbCode: rc, context: write ? "mdb_txn_begin(write)" : "mdb_txn_begin(read)")
                error.message +=
                    ": all \(maxReaders) slots of the reader table (lock.mdb) are held by open read transactions "
                    + "of this and other processes; one must end first"
                throw error
            }
            try check(rc, write ? "mdb_txn_begin(write)" : "mdb_txn_begin(read)")
            let t = Transaction(handle: txn!, isWrite: write, file: try mappedFile(), pageSize: pageSize)
            let result: R
            do {
                result = try body(t)
            } catch {
                mdb_txn_abort(txn)
                throw error
            }
            // mdb_txn_commit frees the transaction whether or not it succeeds. A read transaction is
            // committed too, so that database handles it opened stay valid for the environment.
            try check(mdb_txn_commit(txn), "mdb_txn_commit")
            return result
        }
    }

    /// The map's address and size and the data file's size now (`fstat`): every page of a
    /// transaction that begins after this lies within the file.
    private func mappedFile() throws -> MappedFile {
        guard mapBase != 0 else {
            return MappedFile(mapStart: 0, mapEnd: 0, fileEnd: 0, descriptor: -1, windows: nil, readsPages: readsPages)
        }
        var fd: Int32 = -1
        try check(mdb_env_get_fd(handle, &fd), "mdb_env_get_fd")
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw StoreError.system(errno, context: "fstat(data.mdb)") }
        return MappedFile(
            mapStart: mapBase, mapEnd: mapBase &+ UInt(mapSize), fileEnd: mapBase &+ UInt(st.st_size), descriptor: fd,
            windows: windows, readsPages: readsPages)
    }

    /// Copies the environment to the existing empty directory `path`, compacted, while writers run.
    /// Wraps `mdb_env_copy2` with `MDB_CP_COMPACT`, which holds a read transaction for the whole copy.
    func copy(to path: String) throws {
        pthread_rwlock_rdlock(gate)
        defer { pthread_rwlock_unlock(gate) }
        guard !isClosed else { throw closedError() }
        try check(mdb_env_copy2(handle, path, UInt32(MDB_CP_COMPACT)), "mdb_env_copy2(\(path))")
    }

    /// Copies the environment, compacted, to the open file `descriptor` while writers run. Wraps `mdb_env_copyfd2`
    /// with `MDB_CP_COMPACT`: it holds a read transaction for the whole copy and writes from a thread of its own; a
    /// write that fails ends the copy with that write's error.
    func copy(toDescriptor descriptor: Int32, path: String) throws {
        pthread_rwlock_rdlock(gate)
        defer { pthread_rwlock_unlock(gate) }
        guard !isClosed else { throw closedError() }
        try check(mdb_env_copyfd2(handle, descriptor, UInt32(MDB_CP_COMPACT)), "mdb_env_copyfd2(\(path))")
    }

    /// Flushes the data to disk (`mdb_env_sync` with force), for the less durable modes.
    func sync() throws {
        pthread_rwlock_rdlock(gate)
        defer { pthread_rwlock_unlock(gate) }
        guard !isClosed else { throw closedError() }
        try check(mdb_env_sync(handle, 1), "mdb_env_sync")
    }
}
