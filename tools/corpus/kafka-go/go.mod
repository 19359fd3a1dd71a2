module kcp-corpus/kafka-go

go 1.26.8

require github.com/segmentio/kafka-go v0.4.51

require (
	github.com/klauspost/compress v1.15.9 // indirect
	github.com/pierrec/lz4/v4 v4.1.15 // indirect
)

require kcp-corpus/vecdraft v0.0.0

replace kcp-corpus/vecdraft => ../vecdraft
