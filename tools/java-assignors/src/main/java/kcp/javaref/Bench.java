package kcp.javaref;
final class Bench { static void main(String[] a) { throw new UnsupportedOperationException("todo"); } }
