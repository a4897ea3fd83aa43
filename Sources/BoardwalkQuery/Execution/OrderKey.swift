/// A position in `(time, seq)` order (semantics rule 1); `seq` is unique, so the order is total.
struct OrderKey: Comparable {
    var time: Int64
    var seq: UInt64

    static let lowest = OrderKey(time: .min, seq: 0)
    static let highest = OrderKey(time: .max, seq: .max)

    @inline(__always)
    static func < (a: OrderKey, b: OrderKey) -> Bool { a.time != b.time ? a.time < b.time : a.seq < b.seq }
}
