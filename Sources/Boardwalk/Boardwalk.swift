// The embeddable library: one import for every layer.
@_exported import BoardwalkCodec
@_exported import BoardwalkGenerator
@_exported import BoardwalkJSON
@_exported import BoardwalkModel
@_exported import BoardwalkQuery
@_exported import BoardwalkStore
