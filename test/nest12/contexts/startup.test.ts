/**
 * `@RateLimit` on a resolver or a gateway (providers, not controllers) is built when the app starts, so
 * bad options stop the app there, naming the class and the handler, as a controller's do.
 */
import { Test } from '@nestjs/testing';
import { SubscribeMessage, WebSocketGateway } from '@nestjs/websockets';
import { RateLimit, TollgateModule } from '@tollgate/nestjs';
import { expect, it } from 'vitest';

@WebSocketGateway({ path: '/chat' })
class ChatGateway {
  @RateLimit({ limit: 5, window: 'soon' as never })
  @SubscribeMessage('chat')
  chat() {}
}

it("stops the app at startup for a gateway handler's bad @RateLimit options", async () => {
  const moduleRef = await Test.createTestingModule({
    imports: [TollgateModule.forRoot()],
    providers: [ChatGateway],
  }).compile();
  const started = moduleRef.init().catch((error: unknown) => error);
  expect(await started).toMatchObject({
    name: 'TypeError',
    code: 'TOLLGATE_INVALID_OPTION',
    message: expect.stringMatching(/^@tollgate\/nestjs \(ChatGateway\.chat\): .*window/),
  });
});
