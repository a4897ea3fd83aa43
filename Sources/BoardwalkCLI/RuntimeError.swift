/// A failure while doing the work (exit status 1).
package struct RuntimeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What failed, without the `Error: ` prefix.
    package var message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}
