import BoardwalkModel

/// A generated event waiting in the heap, with its insertion order to break ties.
struct Pending: Sendable {
    var event: Event
    var order: Int
}

/// A binary min-heap of pending events, ordered by time then insertion order.
///
/// The ordering keys sit in an array of their own: comparing two `Pending` values in place copied each event (a
/// retain and release of every string it holds), half of the generator's time.
struct MinHeap: Sendable {
    private var items: [Pending] = []
    /// `keys[i]` orders `items[i]`: its time, then its insertion order.
    private var keys: [(time: Int64, order: Int)] = []
    var isEmpty: Bool { items.isEmpty }
    var min: Pending? { items.first }

    @inline(__always)
    private func less(_ i: Int, _ j: Int) -> Bool {
        keys[i].time != keys[j].time ? keys[i].time < keys[j].time : keys[i].order < keys[j].order
    }

    private mutating func swapAt(_ i: Int, _ j: Int) {
        items.swapAt(i, j)
        keys.swapAt(i, j)
    }

    mutating func insert(_ item: Pending) {
        keys.append((item.event.time.microseconds, item.order))
        items.append(item)
        var i = items.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard less(i, parent) else { break }
            swapAt(i, parent)
            i = parent
        }
    }

    mutating func popMin() -> Pending? {
        guard !items.isEmpty else { return nil }
        swapAt(0, items.count - 1)
        keys.removeLast()
        let top = items.removeLast()
        var i = 0
        while true {
            let l = 2 * i + 1, r = l + 1
            var m = i
            if l < keys.count, less(l, m) { m = l }
            if r < keys.count, less(r, m) { m = r }
            if m == i { break }
            swapAt(i, m)
            i = m
        }
        return top
    }
}
