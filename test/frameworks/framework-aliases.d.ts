// The older majors are installed under aliases for the version matrix; they share the current types.
declare module 'express4' {
  import express from 'express';
  export default express;
}
declare module 'koa2' {
  import Koa from 'koa';
  export default Koa;
}
declare module 'fastify4' {
  import fastify from 'fastify';
  export default fastify;
}
