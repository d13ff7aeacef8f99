/** The schema the cost tests count against: lists sized by arguments, directives, a union, a connection. */
import { buildSchema } from 'graphql';
import { costDirectives } from '../src/index.js';

export const schema = buildSchema(`${costDirectives}
  type Query {
    users(first: Int, last: Int): [User!]!
    user(id: ID!): User
    search(term: String!): [SearchResult!]! @listSize(assumedSize: 5)
    expensive: Int @cost(weight: 7)
    usersConnection(first: Int): UserConnection!
    feed(count: Int = 20): [Post!]! @listSize(slicingArguments: ["count"])
    page(size: Int): PostPage! @listSize(slicingArguments: ["size"], sizedFields: ["items"])
    tags: [String!]!
    grid: [[Int]]
  }
  type User {
    id: ID!
    name: String
    posts(first: Int): [Post!]!
    friends: [User!]!
  }
  type Post @cost(weight: 2) {
    id: ID!
    title: String
  }
  union SearchResult = User | Post
  type UserConnection { edges: [UserEdge!]! nodes: [User!]! pageInfo: PageInfo! }
  type UserEdge { node: User! cursor: String! }
  type PageInfo { hasNextPage: Boolean! }
  type PostPage { items: [Post!]! total: Int! }
`);
