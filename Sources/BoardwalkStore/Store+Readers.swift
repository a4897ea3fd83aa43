internal import CLMDB

/// The read transactions open on a store, in every process (LMDB's reader table).
public struct ReaderTable: Sendable, Equatable {
    /// Read transactions open now, this process's included.
    public var open: Int
    /// How many commits the oldest open read transaction is behind the latest, or `nil` when none is open. While it
    /// lasts, the pages freed by those commits are not reused: the writer takes new ones and the file grows.
    public var oldestCommitsBehind: UInt64?
}

extension Store {
    /// How many read transactions the store's reader table holds at once, in all processes together
    /// (`mdb_env_get_maxreaders`): 1 024, or 126 while a process of an older Boardwalk that made the lock file with
    /// liblmdb's default has the store open. Past it, a new read and a write throw `.lmdb` naming the limit.
    public var maxReaders: Int { env.ifOpen { _ in env.maxReaders } ?? 0 }

    /// The read transactions open on the store now, in every process, and how far behind the oldest one is.
    ///
    /// Wraps `mdb_reader_list` and `mdb_env_info`. A long reader (an export, a slow query) pins the snapshot it began
    /// from, so the file grows while writers commit (docs/storage.md, "Concurrency").
    /// - Complexity: O(reader slots), at most 1 024.
    public var readers: ReaderTable {
        env.ifOpen { handle in
            var info = MDB_envinfo()
            mdb_env_info(handle, &info)
            final class Lines { var text = "" }
            let lines = Lines()
            _ = withExtendedLifetime(lines) {
                mdb_reader_list(
                    handle,
                    { message, context in
                        guard let message, let context else { return 0 }
                        Unmanaged<Lines>.fromOpaque(context).takeUnretainedValue().text += String(cString: message)
                        return 0
                    }, Unmanaged.passUnretained(lines).toOpaque())
            }
            // "(no active readers)", or a header line, then "pid thread txnid" per slot ("-" for a slot without a
            // transaction).
            var open = 0
            var oldest: UInt64? = nil
            for line in lines.text.split(separator: "\n") {
                let fields = line.split(separator: " ")
                guard fields.count == 3, Int(fields[0]) != nil, let txnid = UInt64(fields[2]) else { continue }
                open += 1
                oldest = min(oldest ?? txnid, txnid)
            }
            let latest = UInt64(info.me_last_txnid)
            return ReaderTable(open: open, oldestCommitsBehind: oldest.map { latest >= $0 ? latest - $0 : 0 })
        } ?? ReaderTable(open: 0, oldestCommitsBehind: nil)
    }
}
