import BoardwalkCodec
import BoardwalkModel

/// A value the caller stores in the same transaction as a batch of events, for example how far into an
/// input file the batch reached, so that a restarted import resumes exactly where the last commit ended.
public struct Checkpoint: Hashable, Sendable {
    /// The checkpoint's name (1 to 400 UTF-8 bytes).
    public var key: String
    /// Any bytes.
    public var value: [UInt8]

    /// A checkpoint to store under `key`.
    public init(key: String, value: [UInt8]) {
        self.key = key
        self.value = value
    }
}

extension Checkpoint {
    func validate() throws {
        let n = key.utf8.count
        guard n >= 1 && n <= Layout.maxInlineKeyString else {
            throw StoreError(
                .invalidArgument, "a checkpoint key must have 1 to \(Layout.maxInlineKeyString) UTF-8 bytes, not \(n)")
        }
    }
}
