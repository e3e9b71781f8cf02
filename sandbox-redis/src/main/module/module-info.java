/**
 * The dev.sandbox4j.redis module.
 *
 * @since 0.1.0
 */
module dev.sandbox4j.redis {
    requires transitive dev.sandbox4j.compose;
    requires redis.clients.jedis;
    requires org.slf4j;

    exports dev.sandbox4j.redis;
}
