import Synchronization

/// A flag that stops a running query: set it from a signal handler's task or another thread (Ctrl-C in the
/// REPL); the executor checks it every few thousand events and throws ``QueryError/Kind/cancelled``.
/// The store is only read, so stopping leaves it untouched.
public final class CancellationFlag: Sendable {
    private let flag = Atomic<Bool>(false)

    /// A flag that is not set.
    public init() {}

    /// Asks running queries that hold this flag to stop.
    public func cancel() { flag.store(true, ordering: .relaxed) }

    /// Clears the flag, so it can be used for the next query.
    public func reset() { flag.store(false, ordering: .relaxed) }

    /// Whether ``cancel()`` was called since the flag was made or last reset.
    public var isCancelled: Bool { flag.load(ordering: .relaxed) }
}
