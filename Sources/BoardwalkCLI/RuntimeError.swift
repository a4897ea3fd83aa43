/// A failure while doing the work (exit status 1).
public struct RuntimeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What failed, without the `Error: ` prefix.
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
