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
    /// How the store was opened.
    public struct Options: Sendable {
        /// How durable an ``Store/append(_:checkpoint:keepIdentical:)`` is when it returns. Default ``Durability/full``.
        public var durability: Durability
        /// The initial map size in bytes; the map grows by itself when full. Default 64 MiB.
        public var initialMapSize: Int
        /// Opens for reading only (`MDB_RDONLY`); appends throw. Default `false`. A store whose lock file this
        /// process may not write (another user's, or on read-only media) is then still opened, without the lock
        /// file: see ``Store/isWithoutLockFile``.
        public var readOnly: Bool
        /// Creates the directory and the store when missing. Default `true`.
        public var create: Bool
        /// When the writer folds the session log into `sessions` (tests make it fold sooner or never).
        var sessionLogLimits = SessionLogLimits.standard
        /// When the writer folds the event log into `events` (tests make it fold sooner or never).
        var eventLogLimits = EventLogLimits.standard
        /// Whether the store reads LMDB's pages itself where it can (``LeafWalk``, the page check); tests turn it off
        /// to run the cursor path a liblmdb of an unknown layout gets (``PageLayout``).
        var readsLMDBPages = true

        /// Options with the defaults above; any may be changed.
        public init(
            durability: Durability = .full, initialMapSize: Int = 64 << 20, readOnly: Bool = false,
            create: Bool = true
        ) {
            self.durability = durability
            self.initialMapSize = initialMapSize
            self.readOnly = readOnly
            self.create = create
        }
    }

    /// How durable a committed append is.
    public enum Durability: Sendable, Hashable {
        /// Every commit is flushed to disk (two `fsync`s) before ``Store/append(_:checkpoint:keepIdentical:)`` returns.
        case full
        /// `MDB_NOMETASYNC`: data is flushed, the meta page is not; a system crash may undo the last
        /// commit, never corrupt the store. One flush per commit.
        case noMetaSync
        /// `MDB_NOSYNC`: nothing is flushed at commit; a system crash (not a process crash) may lose the
        /// last commits and, on file systems that reorder writes, damage the store. Call ``Store/sync()``
        /// at points that must survive. A killed process loses nothing that was committed.
        case noSync
    }
}
