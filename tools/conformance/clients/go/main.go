// One consumer group member of franz-go, Sarama or kafka-go, for the conformance captures
// (tools/conformance/live.sh). It joins GROUP on TOPIC with the given assignor, consumes until
// SECONDS have passed, then leaves the group cleanly, so that a capture shows join, scale-out
// and scale-in rebalances of real clients.
//
//	go run . franz-go|sarama|kafka-go BOOTSTRAP GROUP TOPIC CLIENT_ID ASSIGNOR SECONDS
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/IBM/sarama"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	if len(os.Args) != 8 {
		fmt.Fprintln(os.Stderr, "usage: CLIENT BOOTSTRAP GROUP TOPIC CLIENT_ID ASSIGNOR SECONDS")
		os.Exit(2)
	}
	client, bootstrap, group, topic, clientID, assignor := os.Args[1], os.Args[2], os.Args[3], os.Args[4], os.Args[5], os.Args[6]
	seconds, err := strconv.Atoi(os.Args[7])
	if err != nil {
		fmt.Fprintln(os.Stderr, "SECONDS:", err)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(seconds)*time.Second)
	defer cancel()
	switch client {
	case "franz-go":
		err = runFranz(ctx, bootstrap, group, topic, clientID, assignor)
	case "sarama":
		err = runSarama(ctx, bootstrap, group, topic, clientID, assignor)
	case "kafka-go":
		err = runKafkaGo(ctx, bootstrap, group, topic, clientID, assignor)
	default:
		err = fmt.Errorf("unknown client %q", client)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, client, "error:", err)
		os.Exit(1)
	}
}

func runFranz(ctx context.Context, bootstrap, group, topic, clientID, assignor string) error {
	balancers := map[string]kgo.GroupBalancer{
		"range": kgo.RangeBalancer(), "roundrobin": kgo.RoundRobinBalancer(),
		"sticky": kgo.StickyBalancer(), "cooperative-sticky": kgo.CooperativeStickyBalancer(),
	}
	balancer, ok := balancers[assignor]
	if !ok {
		return fmt.Errorf("franz-go: no balancer %q", assignor)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ClientID(clientID), kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic), kgo.Balancers(balancer), kgo.SessionTimeout(10*time.Second),
		kgo.HeartbeatInterval(1*time.Second))
	if err != nil {
		return err
	}
	for ctx.Err() == nil {
		cl.PollFetches(ctx)
	}
	cl.Close() // leaves the group
	return nil
}

type saramaHandler struct{}

func (saramaHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (saramaHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (saramaHandler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for {
		select {
		case _, ok := <-c.Messages():
			if !ok {
				return nil
			}
		case <-s.Context().Done():
			return nil
		}
	}
}

func runSarama(ctx context.Context, bootstrap, group, topic, clientID, assignor string) error {
	config := sarama.NewConfig()
	config.ClientID = clientID
	config.Version = sarama.V3_9_0_0
	config.Consumer.Group.Session.Timeout = 10 * time.Second
	config.Consumer.Group.Heartbeat.Interval = 1 * time.Second
	strategies := map[string]sarama.BalanceStrategy{
		"range": sarama.NewBalanceStrategyRange(), "roundrobin": sarama.NewBalanceStrategyRoundRobin(),
		"sticky": sarama.NewBalanceStrategySticky(), "cooperative-sticky": sarama.NewBalanceStrategyCooperativeSticky(),
	}
	strategy, ok := strategies[assignor]
	if !ok {
		return fmt.Errorf("sarama: no strategy %q", assignor)
	}
	config.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{strategy}
	cg, err := sarama.NewConsumerGroup([]string{bootstrap}, group, config)
	if err != nil {
		return err
	}
	for ctx.Err() == nil {
		if err := cg.Consume(ctx, []string{topic}, saramaHandler{}); err != nil && ctx.Err() == nil {
			fmt.Fprintln(os.Stderr, "sarama consume:", err)
			time.Sleep(time.Second)
		}
	}
	return cg.Close()
}

func runKafkaGo(ctx context.Context, bootstrap, group, topic, clientID, assignor string) error {
	balancers := map[string]kafka.GroupBalancer{
		"range": kafka.RangeGroupBalancer{}, "roundrobin": kafka.RoundRobinGroupBalancer{},
	}
	balancer, ok := balancers[assignor]
	if !ok {
		return fmt.Errorf("kafka-go: no balancer %q", assignor)
	}
	reader := kafka.NewReader(kafka.ReaderConfig{
		Brokers: []string{bootstrap}, GroupID: group, Topic: topic,
		GroupBalancers: []kafka.GroupBalancer{balancer}, SessionTimeout: 10 * time.Second,
		HeartbeatInterval: time.Second, Dialer: &kafka.Dialer{ClientID: clientID, Timeout: 10 * time.Second},
	})
	for ctx.Err() == nil {
		if _, err := reader.ReadMessage(ctx); err != nil && ctx.Err() == nil {
			fmt.Fprintln(os.Stderr, "kafka-go read:", err)
			time.Sleep(time.Second)
		}
	}
	return reader.Close() // leaves the group
}
