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
    /// Runs `body` as a `read { }` or `write { }` of this store on this thread (``TransactionFrame``), and does a
    /// `close()` made inside it once the outermost one returns.
    func inFrame<R>(write: Bool, _ body: () throws -> R) throws -> R {
        var frame = TransactionFrame(
            store: ObjectIdentifier(self), isWrite: write, previous: transactionFrames.innermost)
        var closeAfter = false
        defer { if closeAfter { finishClose() } }
        return try withUnsafeMutablePointer(to: &frame) { pointer in
            transactionFrames.innermost = pointer
            defer {
                transactionFrames.innermost = pointer.pointee.previous
                closeAfter = pointer.pointee.closeWhenDone
            }
            return try body()
        }
    }

    /// Throws ``StoreError/Kind/insideTransaction`` when this thread is inside `read { }` or `write { }` of this
    /// store: a write would wait for itself (the writer lock, or the map's growth waiting for the read).
    func checkNotInsideTransaction(_ call: String) throws {
        guard let outermost = transactionFrames.outermost(of: self) else { return }
        if outermost.pointee.isWrite {
            throw StoreError(
                .insideTransaction,
                "\(call) inside store.write { } of the same store would wait for itself: "
                    + "append with the StoreWriter passed to write { }")
        }
        throw StoreError(
            .insideTransaction,
            "\(call) inside store.read { } of the same store could wait for itself "
                + "(growing the map waits for every read): append after read { } returns, or read with "
                + "write { w in try w.snapshot … } and append with w")
    }
}

/// One ``Store/read(_:)`` or ``Store/write(_:)`` running on this thread, in a chain from the innermost to the
/// outermost (``transactionFrames``). It lives on the stack of the call that made it, for as long as that call runs.
///
/// A call that must not run inside a transaction of its own thread (it would wait for that transaction) finds it
/// here: two thread-local accesses per `read`/`write`, never per event, and nothing another thread can see, so
/// other threads still wait for each other as before.
struct TransactionFrame {
    let store: ObjectIdentifier
    let isWrite: Bool
    let previous: UnsafeMutablePointer<TransactionFrame>?
    /// Set by a `close()` made inside this (outermost) frame of its store: closes the store when the frame ends.
    var closeWhenDone = false
}

/// The innermost ``TransactionFrame`` of the calling thread, in a POSIX thread-specific value.
let transactionFrames = ThreadFrames()

final class ThreadFrames: Sendable {
    private let key: pthread_key_t

    init() {
        var key = pthread_key_t()
        // Without a key nothing can be detected; this fails only when the process has used up its keys (1024+).
        // The call stays outside `precondition`, whose condition -Ounchecked does not evaluate.
        let created = pthread_key_create(&key, nil)
        precondition(created == 0, "pthread_key_create failed")
        self.key = key
    }

    /// The innermost frame of this thread, or `nil` outside every `read { }` and `write { }`.
    var innermost: UnsafeMutablePointer<TransactionFrame>? {
        get { pthread_getspecific(key)?.assumingMemoryBound(to: TransactionFrame.self) }
        set { pthread_setspecific(key, newValue) }
    }

    /// The outermost frame of `store` on this thread, or `nil` when this thread is not inside one of its transactions.
    func outermost(of store: Store) -> UnsafeMutablePointer<TransactionFrame>? {
        let id = ObjectIdentifier(store)
        var found: UnsafeMutablePointer<TransactionFrame>? = nil
        var frame = innermost
        while let current = frame {
            if current.pointee.store == id { found = current }
            frame = current.pointee.previous
        }
        return found
    }
}
