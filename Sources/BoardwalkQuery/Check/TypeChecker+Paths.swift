extension TypeChecker {
    /// `paths (after | before) (step | start | end) [depth N]`: the anchor bound like a funnel step, the depth
    /// from 1 to ``BoundPaths/maxDepth`` (``BoundPaths/defaultDepth`` when not given).
    func paths(_ spec: PathsSpec) throws(QueryError) -> BoundPaths {
        var checker = self
        checker.checksAnchor = true
        let anchor: BoundPaths.Anchor =
            switch spec.anchor {
            case .after(let s): .after(try checker.step(s, what: "the anchor of `paths`"))
            case .before(let s): .before(try checker.step(s, what: "the anchor of `paths`"))
            case .start: .start
            case .end: .end
            }
        let depth = spec.depth ?? Int64(BoundPaths.defaultDepth)
        guard depth >= 1, depth <= Int64(BoundPaths.maxDepth) else {
            throw fail(
                "`depth` must be from 1 to \(BoundPaths.maxDepth); this is \(depth)",
                spec.depthRange ?? spec.anchorRange,
                label: depth < 1
                    ? "the number of steps besides the anchor" : "each step multiplies the distinct paths")
        }
        return BoundPaths(anchor: anchor, depth: Int(depth))
    }
}
