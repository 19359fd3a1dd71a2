module kcp-corpus/sarama-legacy

go 1.26.8

require github.com/Shopify/sarama v1.19.0

require (
	github.com/Shopify/toxiproxy v2.1.4+incompatible // indirect
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/eapache/go-resiliency v1.7.0 // indirect
	github.com/eapache/go-xerial-snappy v0.0.0-20230731223053-c322873962e3 // indirect
	github.com/eapache/queue v1.1.0 // indirect
	github.com/frankban/quicktest v1.14.6 // indirect
	github.com/golang/snappy v0.0.4 // indirect
	github.com/pierrec/lz4 v2.6.1+incompatible // indirect
	github.com/rcrowley/go-metrics v0.0.0-20250401214520-65e299d6c5c9 // indirect
)

require kcp-corpus/vecdraft v0.0.0

replace kcp-corpus/vecdraft => ../vecdraft
