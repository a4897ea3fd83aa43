import BoardwalkCodec
import BoardwalkModel

/// A session of an onboarding (``Snapshot/sessions(ofOnboarding:)-(StringID)``).
public struct SessionSummary: Hashable, Sendable {
    /// The interned session id.
    public var id: StringID
    /// The session id string (an inferred session's is `inferred:<seq of its first event>`).
    public var session: String
    /// The time of the first event stored for it (in arrival order).
    public var firstTime: Timestamp
}
